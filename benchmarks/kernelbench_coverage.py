"""KernelBench's own files on this machine: load, verify, import into TVM, optimize (issue #23).

Usage::

    python benchmarks/kernelbench_coverage.py CHECKOUT [--levels 1,2,3] [--per-level N]
        [--steps load,self,wrong,tvm,optimize] [--optimize-sample 20,10] [--timeout S] [--tvm-timeout S]
        [--jsonl FILE] [--skip JSONL...] [--only-files LIST]
    python benchmarks/kernelbench_coverage.py CHECKOUT --summarize JSONL...

``CHECKOUT`` is a KernelBench checkout (its ``KernelBench/level1..3`` folders,
or the folder holding them); its files are read where they are, never copied.
Per file, each step runs as a subprocess with a wall-clock limit, so a hang or a
traceback is counted as what it is:

* ``load``: :func:`kstrata.tasks.loader.load_task` + ``check_reference``
  (level and category inferred, measured FLOPs/bytes, scaled test shapes);
* ``self``: ``kstrata eval FILE SELF --backend pytorch --no-time`` where SELF
  is the file plus ``ModelNew = Model`` (must be ``correct``; where the judge
  finds before any candidate call that the reference itself cannot run the
  verification in ``--timeout`` or in memory, the row says
  ``reference_failure`` with kstrata's one-line reason);
* ``wrong``: the same with a ``ModelNew`` whose outputs are zeros of the
  right shape and dtype (must never be ``correct``; a ``weak_task`` match also
  counts as caught);
* ``tvm``: the ``tvm-llvm`` initial candidate builds and matches the
  reference at the first small shape (:func:`kstrata.backends.tvm.coverage.check_task`);
* ``optimize``: ``kstrata optimize FILE --backend tvm-llvm --budget evals=6``
  (built-in proposer) on a sample stratified by category (``--optimize-sample``
  level-1,level-2 counts); faster than eager / MetaSchedule when the speedup
  interval's lower bound against that baseline exceeds 1.

``--per-level N`` takes a stratified sample of N files per level (round robin
over the inferred categories, in file order; files run in that order, so a
run stopped part way has covered the categories alike), for a run that fits
the time at hand; the output says so. ``--skip`` continues a run (files in
those ``--jsonl`` files are not run again), ``--only-files`` re-runs chosen
files (e.g. one step on newer code), and ``--summarize`` merges ``--jsonl``
files, a later file's step of a file replacing an earlier one's. Every step
runs in a session of its own and is killed with its whole process group at
its limit (a hung TVM ``popen_worker`` included); a step that printed its
answer but hung on the way out keeps the answer (``hung_at_exit``). Prints one line per file and step, then a table per
level: loaded, verified, wrong caught, TVM-importable, faster than eager,
faster than MetaSchedule, median seconds per step.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

PY = sys.executable
KSTRATA = str(Path(PY).with_name("kstrata"))

WRONG = '''

import torch as _kb_torch


class ModelNew(Model):
    """Wrong on purpose: zeros of the reference's output shapes and dtypes."""

    def forward(self, *args, **kwargs):
        out = super().forward(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(_kb_torch.zeros_like(o) for o in out)
        return _kb_torch.zeros_like(out)
'''


def level_dirs(checkout: Path, levels: list[int]) -> dict[int, Path]:
    base = checkout / "KernelBench" if (checkout / "KernelBench").is_dir() else checkout
    return {lv: base / f"level{lv}" for lv in levels if (base / f"level{lv}").is_dir()}


def stratified(files: list[Path], n: int) -> list[Path]:
    """``n`` files round robin over the inferred categories (file order within
    one), in that round-robin order."""
    from kstrata.tasks.meta import inferred_category, level_from_path

    if n <= 0 or n >= len(files):
        return files
    by_cat: dict[str, list[Path]] = defaultdict(list)
    for f in files:
        by_cat[inferred_category(f.read_text(), level_from_path(f) or 1)].append(f)
    out: list[Path] = []
    while len(out) < n:
        for cat in sorted(by_cat):
            if by_cat[cat] and len(out) < n:
                out.append(by_cat[cat].pop(0))
    return out  # round-robin order: a run stopped part way has covered every category alike


#: CPU seconds (user + system) of the last :func:`run`'s process tree, as far as its
#: processes waited for their children (a killed step's leftovers are not counted)
LAST_CPU_S = [0.0]


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run(cmd: list[str], timeout: float, env: dict | None = None) -> tuple[int, str, float]:
    """Run ``cmd`` in a session of its own; at ``timeout`` seconds its whole
    process group is killed (TVM's popen workers included). Returns
    (exit status, 124 on timeout; stdout + stderr; wall seconds); its CPU
    seconds go to :data:`LAST_CPU_S`."""
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True, env=env,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = 124
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)  # the step's leftovers too, whether it ended or not
        p.wait()
        LAST_CPU_S[0] = _children_cpu() - cpu0
        out.seek(0)
        return rc, out.read(), time.perf_counter() - t0


def last_json(text: str) -> dict | None:
    i, j = text.find("{"), text.rfind("}")
    if i < 0 or j < 0:
        return None
    try:
        return json.loads(text[i:j + 1])
    except ValueError:
        return None


def step_load(path: Path, timeout: float) -> dict:
    # a TaskError (a file kstrata cannot use, e.g. an import it lacks) is kstrata's worded answer, as the
    # CLI prints it: a failed load, not a traceback
    code = ("import json,sys\nfrom kstrata.tasks.loader import load_task, check_reference\n"
            "from kstrata.tasks.base import TaskError\n"
            "try:\n    t = load_task(sys.argv[1]); check_reference(t)\n"
            "except TaskError as e:\n    print('error:', e); sys.exit(2)\n"
            "print(json.dumps({'level': t.level, 'category': t.category, 'flops': t.flops(), "
            "'bytes': t.bytes(), 'small': t.small_shapes, 'sweep': t.sweep_shapes}))\n")
    rc, out, s = run([PY, "-c", code, str(path)], timeout)
    d = last_json(out) if rc == 0 else None
    return {"ok": d is not None, "s": s, "info": d, "why": "" if d else out.strip().splitlines()[-1:] or [f"rc {rc}"],
            "traceback": "Traceback" in out}


def step_eval(path: Path, extra: str, tmp: Path, timeout: float) -> dict:
    cand = tmp / f"{path.stem}_{'self' if not extra.strip().startswith('import') else 'wrong'}.py"
    cand.write_text(path.read_text() + ("\n\nModelNew = Model\n" if not extra else extra))
    rc, out, s = run([KSTRATA, "eval", str(path), str(cand), "--backend", "pytorch", "--no-time",
                      "--json", "--timeout", str(timeout)], timeout + 120)
    cpu = round(LAST_CPU_S[0], 1)
    d = last_json(out) or {}
    ev = d.get("evidence") or {}
    if not d and rc == 2 and "the task's reference" in out:  # ReferenceFailure: named before any candidate call
        line = next((x for x in out.splitlines() if "error:" in x), out.strip()[-300:])
        return {"verdict": "reference_failure", "check": None, "s": s, "cpu_s": cpu,
                "traceback": "Traceback" in out, "why": line.strip()[:400], "tests": (None, None)}
    return {"verdict": d.get("verdict") or ("timeout(outer)" if rc == 124 else f"rc{rc}"),
            "check": d.get("check"), "s": s, "cpu_s": cpu, "traceback": "Traceback" in out,
            "why": (ev.get("message") if isinstance(ev, dict) else str(ev)) or out.strip()[-300:],
            "tests": (d.get("public_tests"), d.get("hidden_tests"))}


def step_tvm(path: Path, timeout: float) -> dict:
    code = ("import json,sys\nfrom kstrata.backends.registry import get_backend\n"
            "from kstrata.backends.tvm.coverage import check_task\nfrom kstrata.tasks.loader import load_task\n"
            "t = load_task(sys.argv[1])\no = check_task(get_backend('tvm-llvm'), t, [t.small_shapes[0]])\n"
            "print(json.dumps({'status': o.status, 'why': o.reason}))\n")
    rc, out, s = run([PY, "-c", code, str(path)], timeout)
    d = last_json(out) if rc in (0, 124) else None  # 124 with an answer: it hung on the way out
    status = d["status"] if d else ("timeout" if rc == 124 else "error")
    return {"ok": status == "ok", "status": status, "s": s, "traceback": "Traceback" in out and not d,
            "hung_at_exit": bool(d) and rc == 124, "why": (d or {}).get("why") or out.strip()[-200:]}


def step_optimize(path: Path, tmp: Path, timeout: float, budget: str = "evals=6") -> dict:
    out_dir = tmp / f"run_{path.stem}"
    rc, out, s = run([KSTRATA, "optimize", str(path), "--backend", "tvm-llvm", "--budget", budget,
                      "--out", str(out_dir)], timeout)
    summ = {}
    try:
        summ = json.loads((out_dir / "summary.json").read_text())
    except (OSError, ValueError):
        pass
    best = summ.get("best") or {}
    faster = {}
    for sp in best.get("speedups") or []:
        name = str(sp.get("baseline", ""))
        lo = sp.get("lo", sp.get("low", sp.get("ci_low")))
        if lo is not None:
            faster[name] = faster.get(name, False) or float(lo) > 1.0
    return {"ok": bool(summ), "s": s, "rc": rc, "traceback": "Traceback" in out,
            "eager": any(v for k, v in faster.items() if "eager" in k),
            "ms": any(v for k, v in faster.items() if "meta" in k.lower() or "tvm" in k.lower()),
            "best": best.get("speedup"), "why": out.strip()[-200:] if not summ else ""}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--levels", default="1,2,3")
    ap.add_argument("--per-level", type=int, default=0, help="stratified sample per level (0: all)")
    ap.add_argument("--steps", default="load,self,wrong,tvm,optimize")
    ap.add_argument("--optimize-sample", default="20,10", help="files optimized in level 1, level 2")
    ap.add_argument("--optimize-budget", default="evals=6", help="optimize's --budget (e.g. evals=6,wall=420)")
    ap.add_argument("--optimize-timeout", type=float, default=1800, help="the optimize step's limit (s)")
    ap.add_argument("--timeout", type=float, default=300.0, help="per verification (s)")
    ap.add_argument("--jsonl", type=Path, default=None, help="append one JSON row per file")
    ap.add_argument("--summarize", type=Path, nargs="+", default=None,
                    help="only print the tables of --jsonl files (a run stopped part way); a later "
                         "file's step of a file replaces an earlier file's")
    ap.add_argument("--skip", type=Path, nargs="+", default=[],
                    help="--jsonl files whose files are not run again (a run continued)")
    ap.add_argument("--only-files", type=Path, default=None,
                    help="a text file of file names (one a line): run only these")
    ap.add_argument("--tvm-timeout", type=float, default=None, help="the tvm step's limit (default --timeout)")
    ap.add_argument("--commit", default="", help="the checkout's commit, when it is not a git work tree")
    args = ap.parse_args()
    if args.summarize:
        table(merged(args.summarize))
        return 0
    done = {(r["level"], r["file"]) for lv_rows in merged(args.skip).values() for r in lv_rows} \
        if args.skip else set()
    only = set(args.only_files.read_text().split()) if args.only_files else None
    levels = [int(x) for x in args.levels.split(",")]
    steps = args.steps.split(",")
    import torch

    try:
        import tvm

        tvm_v = tvm.__version__
    except Exception:  # noqa: BLE001
        tvm_v = "absent"
    commit = args.commit
    try:
        commit = subprocess.run(["git", "-C", str(args.checkout), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip() or commit
    except OSError:
        pass
    print(f"# kernelbench coverage {datetime.datetime.now().isoformat(timespec='minutes')} "
          f"host={platform.node()} {platform.machine()} cpus={os.cpu_count()} python={platform.python_version()} "
          f"torch={torch.__version__} tvm={tvm_v} kernelbench={commit or '?'}")
    print(f"# levels={args.levels} steps={args.steps} per-level={args.per_level or 'all'} "
          f"optimize-sample={args.optimize_sample} optimize-budget={args.optimize_budget} timeout={args.timeout:g}s "
          f"KSTRATA_SHAPES={os.environ.get('KSTRATA_SHAPES', '(auto)')}")
    if args.per_level:
        print(f"# SAMPLED: {args.per_level} files per level, stratified by inferred category (not every file)")
    opt_n = dict(zip((1, 2), (int(x) for x in args.optimize_sample.split(","))))
    rows: dict[int, list[dict]] = defaultdict(list)
    tmp = Path(tempfile.mkdtemp(prefix="kb_cov_"))
    for lv, folder in level_dirs(args.checkout, levels).items():
        files = sorted(folder.glob("*.py"), key=lambda p: int(p.name.split("_")[0]) if p.name[0].isdigit() else 0)
        files = stratified(files, args.per_level)
        to_opt = set(stratified(list(files), opt_n.get(lv, 0))) if "optimize" in steps and opt_n.get(lv) else set()
        for f in files:
            if (lv, f.name) in done or (only is not None and f.name not in only):
                continue
            if set(steps) == {"optimize"} and f not in to_opt:  # an optimize-only run writes rows for its sample only
                continue
            r: dict = {"file": f.name, "level": lv, "loadavg": [round(x, 1) for x in os.getloadavg()]}
            if "load" in steps:
                r["load"] = step_load(f, 600)
                info = r["load"]["info"] or {}
                print(f"L{lv} {f.stem[:44]:44s} load {'ok' if r['load']['ok'] else 'FAIL'} "
                      f"{info.get('category', '')} {r['load']['s']:.1f}s "
                      f"{'' if r['load']['ok'] else r['load']['why']}", flush=True)
                if not r["load"]["ok"]:
                    rows[lv].append(r)
                    if args.jsonl:  # a failed load is a row too (it used to be left out of --jsonl)
                        with args.jsonl.open("a") as fh:
                            fh.write(json.dumps(r, default=str) + "\n")
                    continue
            if "self" in steps:
                r["self"] = step_eval(f, "", tmp, args.timeout)
                print(f"L{lv} {f.stem[:44]:44s} self {r['self']['verdict']} {r['self']['s']:.1f}s "
                      f"(cpu {r['self'].get('cpu_s')}s, load {r['loadavg'][0]}) "
                      f"{r['self']['tests']} {'' if r['self']['verdict'] == 'correct' else r['self']['why'][:200]}",
                      flush=True)
            if "wrong" in steps:
                r["wrong"] = step_eval(f, WRONG, tmp, args.timeout)
                w = r["wrong"]
                print(f"L{lv} {f.stem[:44]:44s} wrong {w['verdict']}{'/' + w['check'] if w['check'] else ''} "
                      f"{w['s']:.1f}s", flush=True)
            if "tvm" in steps:
                r["tvm"] = step_tvm(f, args.tvm_timeout or args.timeout)
                print(f"L{lv} {f.stem[:44]:44s} tvm {r['tvm']['status']} {r['tvm']['s']:.1f}s "
                      f"{'' if r['tvm']['ok'] else r['tvm']['why'][:160]}", flush=True)
            if f in to_opt:
                r["optimize"] = step_optimize(f, tmp, args.optimize_timeout, args.optimize_budget)
                o = r["optimize"]
                print(f"L{lv} {f.stem[:44]:44s} optimize {'ok' if o['ok'] else 'FAIL'} best={o['best']} "
                      f"eager={o['eager']} ms={o['ms']} {o['s']:.0f}s {o['why'][:160]}", flush=True)
            rows[lv].append(r)
            if args.jsonl:
                with args.jsonl.open("a") as fh:
                    fh.write(json.dumps(r, default=str) + "\n")
    table(rows)
    return 0


def merged(paths: list[Path]) -> dict[int, list[dict]]:
    """Rows of ``--jsonl`` files by level, one per file: a later file's steps
    replace an earlier file's (a step re-run on newer code)."""
    by_file: dict[tuple[int, str], dict] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                by_file.setdefault((int(r["level"]), r["file"]), {}).update(r)
    out: dict[int, list[dict]] = defaultdict(list)
    for (lv, _), r in sorted(by_file.items()):
        out[lv].append(r)
    return out


#: Verdicts that decide a wrong candidate: caught (a timeout or the reference's
#: own failure decides nothing about it).
CAUGHT = ("incorrect", "rejected", "runtime_error", "compile_error")


def caught(rs: list[dict]) -> str:
    """``caught/decided`` for the wrong candidates, ``(+n undecided)`` where a
    timeout or the reference's failure decided nothing."""
    ws = [r["wrong"] for r in rs if "wrong" in r]
    if not ws:
        return "-"
    yes = sum(1 for w in ws if w["verdict"] in CAUGHT or w.get("check") == "weak_task")
    decided = sum(1 for w in ws if w["verdict"] in CAUGHT or w["verdict"] == "correct")
    rest = len(ws) - decided
    return f"{yes}/{decided}" + (f" (+{rest} undecided)" if rest else "")


def table(rows: dict[int, list[dict]]) -> None:
    """One markdown row per level (see the module docstring)."""
    print()
    print("| level | files | loaded | verified (self correct) | reference failure named | wrong caught | "
          "TVM-importable | optimized | faster than eager | faster than MetaSchedule | tracebacks | "
          "median s: load / self / wrong / tvm / optimize |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for lv, rs in rows.items():
        def cnt(step: str, pred) -> str:
            have = [r for r in rs if step in r]
            return f"{sum(1 for r in have if pred(r[step]))}/{len(have)}" if have else "-"

        def med(step: str) -> str:
            xs = [r[step]["s"] for r in rs if step in r]
            return f"{statistics.median(xs):.1f}" if xs else "-"

        tb = sum(1 for r in rs for k in ("load", "self", "wrong", "tvm", "optimize")
                 if k in r and r[k].get("traceback"))
        print(f"| {lv} | {len(rs)} | {cnt('load', lambda x: x['ok'])} | {cnt('self', lambda x: x['verdict'] == 'correct')} | "
              f"{cnt('self', lambda x: x['verdict'] == 'reference_failure')} | {caught(rs)} | "
              f"{cnt('tvm', lambda x: x['ok'])} | {cnt('optimize', lambda x: x['ok'])} | "
              f"{cnt('optimize', lambda x: x['eager'])} | {cnt('optimize', lambda x: x['ms'])} | {tb} | "
              f"{med('load')} / {med('self')} / {med('wrong')} / {med('tvm')} / {med('optimize')} |")
    for lv, rs in rows.items():  # the load-independent number, and the load the wall times were taken at
        cpu = [r["self"]["cpu_s"] for r in rs if "self" in r and r["self"].get("cpu_s") is not None]
        loads = [r["loadavg"][0] for r in rs if r.get("loadavg")]
        if cpu or loads:
            print(f"# L{lv}: median self-verification CPU >= {statistics.median(cpu) if cpu else '-'} s "
                  f"(kstrata eval's waited-for process tree, a lower bound) over {len(cpu)} files; "
                  f"1-min load average at each file's start "
                  f"min {min(loads) if loads else '-'} median {round(statistics.median(loads), 1) if loads else '-'} "
                  f"max {max(loads) if loads else '-'}")


if __name__ == "__main__":
    sys.exit(main())
