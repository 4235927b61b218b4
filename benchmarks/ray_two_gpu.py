"""``kstrata bench --executor ray`` across every GPU of one host, against a local run.

Two commands:

``run``
    Runs ``kstrata bench`` (the CLI, as a subprocess) over the given tasks on one
    backend with ``--executor ray`` (one candidate per GPU at a time, cells at
    once) or ``--executor local`` (one worker, cells one after another; with
    ``--gpus 0`` on GPU 0 only). For Ray, the executor's call log
    (``KSTRATA_RAY_CALL_LOG``, one JSON line per verification or timing: GPU,
    Ray worker, verdict, seconds) is kept, and with ``--kill-after N`` this
    script SIGKILLs one busy Ray worker process of the bench (a descendant
    whose title is ``ray::run_in_ray_worker``) once N calls have finished: Ray
    re-runs the call that was in flight there, the bench goes on. Writes
    ``OUT/summary.json``: wall clock, exit status, cells, every candidate's
    verdict and timing, the call log, the kill.
``report``
    Reads a local and a Ray ``summary.json`` and prints: the per-GPU table
    (calls, candidates, verdicts, busy seconds), each cell's verdicts on both
    (identical or not, by candidate), the wall clocks, and what the kill cost.

On the lent ``nvidia-h200-x2`` (``benchmarks/ray_two_gpu.sh`` stages and runs
it)::

    python benchmarks/ray_two_gpu.py run --executor local --gpus 0 --out /tmp/r2g-local
    python benchmarks/ray_two_gpu.py run --executor ray --kill-after 6 --out /tmp/r2g-ray
    python benchmarks/ray_two_gpu.py report /tmp/r2g-local/summary.json /tmp/r2g-ray/summary.json
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DEFAULT_TASKS = "relu,gelu,silu,sigmoid,softmax,layernorm,rmsnorm,sum_dim"
RAY_TASK_TITLE = "ray::run_in_ray_worker"
KSTRATA = "from kstrata.cli.main import app; app(prog_name='kstrata')"


def busy_ray_workers(root_pid: int) -> list:
    """Ray worker processes below ``root_pid`` that are running a kstrata call
    (title :data:`RAY_TASK_TITLE`), as ``psutil.Process`` objects."""
    import psutil

    try:
        below = psutil.Process(root_pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for p in below:
        try:
            if " ".join(p.cmdline()).startswith(RAY_TASK_TITLE):
                out.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def kill_one_worker(root_pid: int, call_log: Path, after_calls: int, stop: threading.Event,
                    record: dict) -> None:
    """Once ``call_log`` holds ``after_calls`` lines, SIGKILL one busy Ray worker
    below ``root_pid`` whose kstrata worker is alive (mid-call); fill ``record``
    with its PID, GPU (the kstrata worker's ``CUDA_VISIBLE_DEVICES``), the time,
    and the state of the kstrata worker and its children 5 s later."""
    import psutil

    while not stop.wait(0.5):
        try:
            done = sum(1 for _ in call_log.open()) if call_log.exists() else 0
        except OSError:
            continue
        if done < after_calls:
            continue
        for worker in busy_ray_workers(root_pid):
            try:
                kids = worker.children(recursive=True)
                if not kids:
                    continue
                gpu = kids[0].environ().get("CUDA_VISIBLE_DEVICES", "")
                record.update(pid=worker.pid, gpu=gpu, calls_done_before=done, time=time.time(),
                              children=[k.pid for k in kids])
                os.kill(worker.pid, signal.SIGKILL)
            except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
                record.clear()
                continue
            time.sleep(5)
            record["children_after_5s"] = {k: _status(k) for k in record["children"]}
            return


def code_digest() -> str:
    """sha256 (first 12 hex digits) over kstrata's source files (path and text):
    two runs of a shared checkout can run different code when someone commits
    between them; the report flags it."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted((ROOT / "src" / "kstrata").rglob("*.py")):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:12]


def _status(pid: int) -> str:
    """``psutil`` status of ``pid`` (``zombie``: exited, not yet reaped), or ``gone``."""
    import psutil

    try:
        return psutil.Process(pid).status()
    except psutil.NoSuchProcess:
        return "gone"


def candidates_of(bench_dir: Path) -> tuple[list[dict], dict]:
    """The bench's cells (with every candidate's verdict and timing) and its bench.json."""
    import sqlite3

    from kstrata.store.run_store import RunStore

    config = json.loads((bench_dir / "bench.json").read_text())
    conn = sqlite3.connect(bench_dir / "bench.db")
    conn.row_factory = sqlite3.Row
    cells = [dict(r) for r in conn.execute("SELECT * FROM cells ORDER BY position")]
    conn.close()
    for cell in cells:
        cell["candidates"] = []
        run_dir = bench_dir / cell["run_dir"]
        if cell["status"] == "unsupported" or not RunStore.exists(run_dir):
            continue
        with RunStore.open(run_dir) as store:
            for c in store.candidates():
                ev, m = c.evaluation, c.measurement
                cell["candidates"].append({
                    "hash": c.hash, "role": c.role, "verdict": ev.verdict if ev else None,
                    "check": ev.check if ev else None, "eval_s": ev.wall_s if ev else None,
                    "median_ms": m.median_ms if m else None, "speedup": m.speedup if m else None})
    return cells, config


def run(args: argparse.Namespace) -> int:
    """``run``: one ``kstrata bench``, its summary in ``OUT/summary.json``."""
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    bench_dir, call_log = out / "bench", out / "calls.jsonl"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    if args.gpus is not None:
        env["CUDA_VISIBLE_DEVICES"] = args.gpus
    if args.executor.startswith("ray"):
        env["KSTRATA_RAY_CALL_LOG"] = str(call_log)
        call_log.unlink(missing_ok=True)
    cmd = [sys.executable, "-c", KSTRATA, *(["--unsafe-no-sandbox"] if args.unsafe_no_sandbox else []),
           "bench", "--backends", args.backend, "--tasks", args.tasks, "--budget", args.budget,
           "--seed", str(args.seed), "--executor", args.executor, "--out", str(bench_dir)]
    print("$", " ".join(cmd[3:] if cmd[1] == "-c" else cmd), flush=True)
    start = time.time()
    with open(out / "bench.log", "w") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        kill: dict = {}
        stop = threading.Event()
        killer = None
        if args.kill_after is not None and args.executor.startswith("ray"):
            killer = threading.Thread(target=kill_one_worker, daemon=True,
                                      args=(proc.pid, call_log, args.kill_after, stop, kill))
            killer.start()
        try:
            rc = proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)  # a clean stop: finished cells stay done
            try:
                rc = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
        stop.set()
        if killer is not None:
            killer.join(timeout=10)
    wall = time.time() - start
    cells, config = candidates_of(bench_dir) if (bench_dir / "bench.db").exists() else ([], {})
    calls = [json.loads(line) for line in call_log.open()] if call_log.exists() else []
    try:
        from importlib.metadata import version

        ray_version = version("ray")
    except Exception:  # noqa: BLE001 - not installed: a local run
        ray_version = None
    summary = {"executor": args.executor, "ray": ray_version, "code": code_digest(), "gpus": args.gpus, "backend": args.backend,
               "tasks": args.tasks.split(","), "budget": args.budget, "rc": rc, "start": start,
               "wall_s": wall, "cells": cells, "calls": calls, "kill": kill,
               "environment": config.get("environment", {}),
               "bench_tail": (out / "bench.log").read_text(errors="replace")[-3000:]}
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1, default=str))
    tmp.replace(out / "summary.json")
    print(f"{args.executor}: exit {rc}, {wall:.1f} s, {len(cells)} cells, {len(calls)} logged calls"
          + (f", killed Ray worker {kill.get('pid')} (GPU {kill.get('gpu')})" if kill else ""))
    return rc


def _verdict(c: dict) -> str:
    v = c.get("verdict") or "none"
    return v if v == "correct" or not c.get("check") else f"{v}/{c['check']}"


def gpu_table(calls: list[dict]) -> list[str]:
    """Per GPU: verification and timing calls, distinct candidates, verdicts of
    the verifications, and the seconds its calls ran."""
    by_gpu: dict[str, list[dict]] = collections.defaultdict(list)
    for c in calls:
        by_gpu[",".join(c.get("gpu_ids") or []) or "-"].append(c)
    lines = [f"{'GPU':<5}{'verify':>7}{'time':>6}{'cands':>7}{'busy s':>9}  verdicts (verifications)  tasks"]
    for gpu, cs in sorted(by_gpu.items()):
        verify = [c for c in cs if c["target"].endswith("run_protocol")]
        verdicts = collections.Counter(c.get("verdict") or c["kind"] for c in verify)
        lines.append(f"{gpu:<5}{len(verify):>7}{len(cs) - len(verify):>6}"
                     f"{len({c.get('candidate') for c in cs}):>7}{sum(c['wall_s'] for c in cs):>9.1f}  "
                     + ", ".join(f"{k} {n}" for k, n in sorted(verdicts.items()))
                     + "  " + ",".join(sorted({c.get("task", "?") for c in cs})))
    return lines


def report(args: argparse.Namespace) -> int:
    """``report``: the comparison of a local and a Ray summary, as text."""
    local = json.loads(Path(args.local).read_text())
    ray = json.loads(Path(args.ray).read_text())
    env = ray.get("environment", {})
    vers = env.get("versions", {})
    print(f"# kstrata bench --executor ray vs local; backend {ray['backend']}, budget {ray['budget']}, "
          f"{len(ray['tasks'])} tasks: {','.join(ray['tasks'])}")
    print(f"# date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(ray['start']))}; devices: "
          f"{env.get('devices')}; platform {env.get('platform')}")
    print("# versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()) + f"; ray {ray.get('ray')}")
    print(f"# local: --executor local, CUDA_VISIBLE_DEVICES={local['gpus']}, exit {local['rc']}; "
          f"ray: --executor ray (one candidate per GPU, cells at once), exit {ray['rc']}")
    codes = (local.get("code", "?"), ray.get("code", "?"))
    print(f"# kstrata sources: local {codes[0]}, ray {codes[1]}"
          + ("" if codes[0] == codes[1] else " -- DIFFERENT code: wall clocks are not comparable"))
    print()
    print("## per GPU (Ray run; from the executor's call log)")
    for line in gpu_table(ray["calls"]):
        print(line)
    lc = [c for cell in local["cells"] for c in cell["candidates"]]
    print(f"local (GPU {local['gpus']}): {len(lc)} candidates, "
          + ", ".join(f"{k} {n}" for k, n in sorted(collections.Counter(map(_verdict, lc)).items()))
          + f", {sum(c['eval_s'] or 0 for c in lc):.1f} s of evaluations")
    print()
    print("## verdicts by cell (candidate hash: ray | local)")
    same, both = True, []
    lcells = {c["task"]: c for c in local["cells"]}
    for cell in ray["cells"]:
        other = lcells.get(cell["task"], {"candidates": [], "status": "missing"})
        if cell["status"] != "done" or other["status"] != "done":
            print(f"{cell['task']:<12} ray {cell['status']:<8} local {other['status']:<8} not compared "
                  "(not finished on both)")
            continue
        both.append(cell["task"])
        rv = {c["hash"]: _verdict(c) for c in cell["candidates"]}
        lv = {c["hash"]: _verdict(c) for c in other["candidates"]}
        same &= rv == lv
        pairs = "; ".join(f"{h[:8]}: {rv.get(h, '-')} | {lv.get(h, '-')}" for h in dict.fromkeys([*rv, *lv]))
        print(f"{cell['task']:<12} ray done     local done     {'same' if rv == lv else 'DIFFERENT'}  {pairs}")
    print(f"verdicts identical to local on the {len(both)} cells both finished: {'yes' if same else 'NO'}")
    print()
    print("## wall clock")
    for name, s in (("one GPU, local", local), ("two GPUs, ray", ray)):
        done = [c for c in s["cells"] if c["status"] == "done"]
        span = max(c["finished"] for c in done) - min(c["started"] for c in done) if done else 0.0
        print(f"{name:<16} {s['wall_s']:6.1f} s for the bench (exit {s['rc']}); {len(done)} cells done in "
              f"{span:.1f} s: {span / max(len(done), 1):.1f} s per cell")
    per = {name: {c["task"]: c["finished"] - c["started"] for c in s["cells"] if c["status"] == "done"}
           for name, s in (("local", local), ("ray", ray))}
    print("seconds per cell (start to end; on Ray two cells ran at once): "
          + ", ".join(f"{t} {per['ray'][t]:.0f} vs {per['local'][t]:.0f}" for t in both))
    kill = ray.get("kill") or {}
    if kill:
        t = kill["time"]
        inflight = [c for c in ray["calls"] if c["submitted"] <= t <= c["finished"]]
        print()
        print(f"## killed Ray worker pid {kill['pid']} (GPU {kill['gpu']}) with SIGKILL at "
              f"+{t - ray['start']:.1f} s, after {kill['calls_done_before']} finished calls; its kstrata "
              f"worker and the sandbox below it, 5 s later: {kill.get('children_after_5s')}")
        for c in inflight:
            began = c["finished"] - c["wall_s"]  # its last attempt
            how = (f"re-run by Ray on worker {c['ray_pid']} from +{began - ray['start']:.1f} s"
                   if began > t else f"ran on through the kill on worker {c['ray_pid']}")
            print(f"  in flight then: {c['target'].rsplit(':', 1)[-1]} {c.get('task')} "
                  f"{c.get('candidate', '')[:8]} -> {c['kind']} {c.get('verdict') or ''} on GPU "
                  f"{','.join(c['gpu_ids']) or '-'}, {how}; {c['finished'] - c['submitted']:.1f} s "
                  f"from submit to answer")
        for line in ray["bench_tail"].splitlines():
            if "will be retried" in line:
                print("  bench log: " + re.sub(r"\x1b\[[0-9;]*m", "", line).split("Error:")[0].strip())
        lost = [c for c in ray["calls"] if c["kind"] in ("crash", "timeout", "oom")]
        failed = [c["task"] for c in ray["cells"] if c["status"] == "failed"]
        print(f"  calls lost (crash, timeout, oom after Ray's retries): {len(lost)}; cells failed: "
              f"{failed or 'none'}")
    return 0 if same else 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="one kstrata bench and its summary")
    r.add_argument("--executor", default="ray")
    r.add_argument("--out", required=True)
    r.add_argument("--backend", default="triton")
    r.add_argument("--tasks", default=DEFAULT_TASKS)
    r.add_argument("--budget", default="evals=1")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--gpus", default=None, help="CUDA_VISIBLE_DEVICES of the bench (e.g. 0)")
    r.add_argument("--kill-after", type=int, default=None,
                   help="SIGKILL one busy Ray worker once this many calls finished")
    r.add_argument("--timeout", type=float, default=None, help="stop the bench (Ctrl-C) after S seconds")
    r.add_argument("--unsafe-no-sandbox", action="store_true")
    p = sub.add_parser("report", help="compare a local and a Ray summary")
    p.add_argument("local")
    p.add_argument("ray")
    args = ap.parse_args()
    sys.exit(run(args) if args.cmd == "run" else report(args))


if __name__ == "__main__":
    main()
