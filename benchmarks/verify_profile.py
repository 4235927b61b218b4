"""Where the time of one verification goes, end to end (issue #23: median verification per KernelBench file < 30 s).

Cases are ``KIND:NAME[:BACKEND]``:

* ``kb:level1/5_Matrix_scalar_multiplication`` -- a KernelBench file, read from a
  fetched KernelBench git directory (``--kernelbench GITDIR``, read with ``git
  show``, written to a temporary folder, never into kstrata), verified against
  itself (the file plus ``ModelNew = Model``) on the ``pytorch`` backend;
* ``suite:rmsnorm:triton-interp`` -- a suite task with its shipped kernel for
  that backend (``backend.initial_sources``), written to a temporary file.

For each case, two measurements:

``e2e``
    ``kstrata eval TASK CANDIDATE --backend B --no-time --json --secret bench``
    as a user runs it (a fresh CLI, judge worker, sandbox and candidate
    process): wall seconds and the CPU seconds (user + system) of its whole
    process tree, polled every 0.1 s with psutil (the last reading of every
    process seen, the CLI's included). On a shared machine the wall time
    mostly says how busy the machine was; the CPU time is the comparison.
``parts``
    :func:`kstrata.verify.runner.run_protocol` run in this process (the judge's
    side; the candidate still runs in its own sandboxed process) once to warm
    the sandbox's zygote, once timed (the judge's CPU seconds, and the
    candidate process's own, read with psutil before it is closed), then once
    more with its parts wrapped in CPU-time accumulators (:data:`PARTS`;
    inclusive, so "of which" lines are inside the line above them).

Usage::

    python benchmarks/verify_profile.py --kernelbench GITDIR [--cases CASE,...] [--repeat N] [--no-parts]

Prints one block per case and a summary table; the header gives the date,
machine, load averages, commit and versions.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

DEFAULT_CASES = ("kb:level1/5_Matrix_scalar_multiplication,kb:level1/1_Square_matrix_multiplication_,"
                 "kb:level1/33_BatchNorm,suite:rmsnorm:triton-interp")
KSTRATA = str(Path(sys.executable).with_name("kstrata"))

#: (label, [(holder, attribute), ...], [labels subtracted]): the judge's CPU
#: seconds (``time.process_time``, inclusive) in the listed functions, less the
#: parts named (a label with a leading space is a part of the line above it).
#: Holders are ``kstrata.verify.runner`` (``runner``, where the functions it
#: calls are looked up: ``runner.preflight`` is reference.preflight as the
#: protocol calls it), ``runner.ShapeRun`` and ``torch``. Measured by wrapping
#: each function with a CPU-time accumulator, not cProfile: cProfile's
#: per-call cost made ``torch.manual_seed``'s stack formatting (thousands of
#: small Python calls) look 50 times costlier than it is.
PARTS = (
    ("judge total (run_protocol)", [("runner", "run_protocol")], []),
    ("plan: perturbed shapes run once, reference preflight", [("runner", "safe_shapes"),
                                                              ("runner", "preflight")], []),
    ("candidate process start (fork from the zygote)", [("runner", "fresh")], []),
    ("per shape: instantiate, float64 copy, candidate load", [("runner.ShapeRun", "__init__")], []),
    ("test inputs (seed, get_inputs, distribution)", [("runner.ShapeRun", "inputs")], []),
    (" of which apply_distribution", [("runner", "apply_distribution")], []),
    ("reference forward + float64 oracle (prepare less its inputs)", [("runner.ShapeRun", "prepare")],
     ["test inputs (seed, get_inputs, distribution)"]),
    (" of which float64 oracle", [("runner.ShapeRun", "_oracle")], []),
    ("candidate requests (encode, send, wait, receive)", [("runner.Context", "request")], []),
    ("comparison (judge: tolerance, agreement, caching)", [("runner.ShapeRun", "judge")], []),
    (" of which tolerance.compare", [("runner", "compare")], []),
    ("dynamic probes (DSL backends)", [("runner", "_dynamic_probes")], []),
    ("weak-task check", [("runner", "weak_check")], []),
    ("seeding, every call (torch.manual_seed, seed_all)", [("torch", "manual_seed"), ("runner", "seed_all")], []),
)


def header() -> str:
    import torch

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent).stdout.strip()
    except OSError:
        commit = "?"
    import kstrata

    try:
        import triton

        tv = triton.__version__
    except ImportError:
        tv = "-"
    cpu = "?"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"# verify_profile {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}\n"
            f"# machine: {platform.node()} {cpu}, {os.cpu_count()} CPUs; load average {os.getloadavg()}\n"
            f"# python {platform.python_version()}, torch {torch.__version__}, triton {tv}; "
            f"kstrata from {Path(kstrata.__file__).parent} (commit {commit})")


def materialize(case: str, gitdir: str | None, tmp: Path) -> tuple[str, Path, str]:
    """(task argument, candidate file, backend) for ``case``."""
    kind, _, rest = case.partition(":")
    if kind == "kb":
        if not gitdir:
            raise SystemExit("kb: cases need --kernelbench GITDIR (a fetched KernelBench git directory)")
        name = rest.rsplit("/", 1)[-1]
        text = subprocess.run(["git", f"--git-dir={gitdir}", "show", f"HEAD:KernelBench/{rest}.py"],
                              check=True, capture_output=True, text=True).stdout
        task = tmp / f"{name}.py"
        task.write_text(text)
        cand = tmp / f"{name}_self.py"
        cand.write_text(text + "\n\nModelNew = Model\n")
        return str(task), cand, "pytorch"
    if kind == "suite":
        from kstrata.backends.registry import get_backend
        from kstrata.tasks.loader import resolve_task

        name, _, backend = rest.partition(":")
        backend = backend or "pytorch"
        src = get_backend(backend).initial_sources(resolve_task(name))["source"]
        cand = tmp / f"{name}_{backend}.py"
        cand.write_text(src)
        return name, cand, backend
    raise SystemExit(f"unknown case {case!r} (kb:PATH or suite:TASK[:BACKEND])")


def tree_cpu(proc: subprocess.Popen, stop: threading.Event, seen: dict[int, float]) -> None:
    """Poll the CPU seconds of ``proc`` and its descendants until ``stop``."""
    while not stop.is_set():
        try:
            root = psutil.Process(proc.pid)
            procs = [root] + root.children(recursive=True)
        except psutil.Error:
            procs = []
        for p in procs:
            try:
                t = p.cpu_times()
                seen[p.pid] = max(seen.get(p.pid, 0.0), t.user + t.system)
            except psutil.Error:
                continue
        stop.wait(0.1)


def e2e(task: str, cand: Path, backend: str) -> dict:
    """One ``kstrata eval`` run: wall, tree CPU, the verdict's own numbers."""
    seen: dict[int, float] = {}
    stop = threading.Event()
    t0 = time.perf_counter()
    proc = subprocess.Popen([KSTRATA, "eval", task, str(cand), "--backend", backend, "--no-time", "--json",
                             "--secret", "bench", "--timeout", "600"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    th = threading.Thread(target=tree_cpu, args=(proc, stop, seen), daemon=True)
    th.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    th.join()
    try:
        d = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        d = {"verdict": f"rc{proc.returncode}", "evidence": {"message": err[-500:]}}
    return {"wall_s": wall, "cpu_s": sum(seen.values()), "verdict": d.get("verdict"),
            "protocol_s": d.get("seconds"), "tests": (d.get("public_tests") or 0) + (d.get("hidden_tests") or 0),
            "message": (d.get("evidence") or {}).get("message", "")}


def parts(task_arg: str, cand: Path, backend_name: str) -> tuple[dict[str, float], float, float, float, dict]:
    """The judge's CPU seconds by part (:data:`PARTS`), the candidate
    process's CPU seconds, the judge's wall seconds and CPU seconds (unprofiled
    warm run), and the evaluation."""
    from kstrata.api import read_candidate
    from kstrata.sandbox import client
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import runner

    task = resolve_task(task_arg)
    sources, backend = read_candidate(cand, backend_name)
    cand_cpu: list[float] = []
    close = client.CandidateProcess.close

    def measured_close(self):  # the candidate process's CPU seconds, read before it ends
        z = self.zygote
        if z is not None and z.proc is not None:
            pid = client.host_pid_of(z.proc.pid, self.pid)
            if pid:
                try:
                    t = psutil.Process(pid).cpu_times()
                    cand_cpu.append(t.user + t.system + t.children_user + t.children_system)
                except psutil.Error:
                    pass
        close(self)

    client.CandidateProcess.close = measured_close
    import torch

    holders = {"runner": runner, "runner.ShapeRun": runner.ShapeRun, "runner.Context": runner.Context,
               "torch": torch}
    spent: dict[tuple[str, str], float] = {}
    saved = []

    def timed(key: tuple[str, str], fn):
        def wrapper(*a, **k):
            c0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                spent[key] = spent.get(key, 0.0) + time.process_time() - c0
        return wrapper

    try:
        runner.run_protocol(task, backend, sources, "bench", "strict", "full", timeout_s=600)  # zygote warm-up
        cand_cpu.clear()
        c0, w0 = time.process_time(), time.perf_counter()
        ev = runner.run_protocol(task, backend, sources, "bench", "strict", "full", timeout_s=600)
        judge_cpu, judge_wall = time.process_time() - c0, time.perf_counter() - w0
        cand_plain = sum(cand_cpu)
        for _, keys, _ in PARTS:
            for holder, attr in keys:
                owner = holders[holder]
                if (holder, attr) not in [k for k, _, _ in saved] and hasattr(owner, attr):
                    saved.append(((holder, attr), owner, getattr(owner, attr)))
                    setattr(owner, attr, timed((holder, attr), getattr(owner, attr)))
        runner.run_protocol(task, backend, sources, "bench", "strict", "full", timeout_s=600)
    finally:
        client.CandidateProcess.close = close
        for (_, attr), owner, fn in saved:
            setattr(owner, attr, fn)
    out: dict[str, float] = {}
    for label, keys, less in PARTS:
        out[label] = sum(spent.get(k, 0.0) for k in keys) - sum(out[x] for x in less)
    return out, cand_plain, judge_wall, judge_cpu, ev


def main() -> None:
    if os.environ.get("KSTRATA_VERIFY_PROFILE") is None:  # the judge worker's environment (passive OpenMP waits)
        from kstrata.execute.pool import worker_env

        env = {**os.environ, **{k: v for k, v in worker_env().items() if k != "PYTHONPATH"}}
        env["KSTRATA_VERIFY_PROFILE"] = "1"
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernelbench", help="a fetched KernelBench git directory (for kb: cases)")
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--repeat", type=int, default=1, help="kstrata eval runs per case (the median is reported)")
    ap.add_argument("--no-parts", action="store_true", help="skip the in-process breakdown")
    args = ap.parse_args()
    print(header(), flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kstrata-verify-profile-") as d:
        for case in args.cases.split(","):
            task, cand, backend = materialize(case, args.kernelbench, Path(d))
            runs = [e2e(task, cand, backend) for _ in range(args.repeat)]
            wall = statistics.median(r["wall_s"] for r in runs)
            cpu = statistics.median(r["cpu_s"] for r in runs)
            last = runs[-1]
            print(f"\n## {case}  ({backend}; load average now {os.getloadavg()[0]:.1f})")
            print(f"#   kstrata eval: {last['verdict']}, {last['tests']} tests; wall {wall:.1f} s "
                  f"(protocol {last['protocol_s'] or 0:.1f} s), CPU of the process tree {cpu:.1f} s "
                  f"(runs: {', '.join('%.1f/%.1f' % (r['wall_s'], r['cpu_s']) for r in runs)} wall/CPU s)", flush=True)
            row = {"case": case, "verdict": last["verdict"], "tests": last["tests"], "wall_s": wall, "cpu_s": cpu}
            if not args.no_parts:
                spent, cand_cpu, jwall, jcpu, ev = parts(task, cand, backend)
                total = spent[PARTS[0][0]] or 1.0
                print(f"#   judge in this process (warm zygote): {jcpu:.2f} CPU s ({jwall:.1f} s wall); "
                      f"candidate process {cand_cpu:.2f} CPU s; parts of a third run (CPU s)")
                for label, _, _ in PARTS:
                    print(f"#     {label:<62}{spent[label]:>8.2f} s {100 * spent[label] / total:>5.1f}%")
                row.update(judge_cpu=jcpu, cand_cpu=cand_cpu)
            rows.append(row)
    print("\n# summary (median of --repeat runs; CPU = the kstrata eval process tree)")
    print(f"{'case':<48}{'verdict':<10}{'tests':>6}{'wall_s':>9}{'cpu_s':>8}{'judge_cpu':>11}{'cand_cpu':>10}")
    for r in rows:
        print(f"{r['case']:<48}{r['verdict']:<10}{r['tests']:>6}{r['wall_s']:>9.1f}{r['cpu_s']:>8.1f}"
              f"{r.get('judge_cpu', float('nan')):>11.2f}{r.get('cand_cpu', float('nan')):>10.2f}")
    print(f"# load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
