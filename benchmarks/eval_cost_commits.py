"""Where one search evaluation's time goes, for two or more checkouts of kstrata side by side.

Why: on the H100 (2026-12-06) a Triton rmsnorm evaluation in ``benchmarks/gpu_optimize_suite.py``
took 61 s at commit 299423e against 34 s at a2b2281 the day before (the paired timing against eager
27 s against 10 s per call), and the suite's rows keep only the totals. This script times the
same evaluations with each checkout's ``src`` in its own fresh process, so the difference can be
put on verification or timing and then on a commit range.

For each ``--src LABEL=DIR`` (a checkout's ``src`` folder; the device's copy of an older commit
travels as a git-ignored folder) and each task, a child process with ``PYTHONPATH=DIR`` (plus
the rest of ``PYTHONPATH``) makes the backend's worker pool and the suite's evaluator
(``benchmarks/optimize_suite.TimedEvaluator``: ``VerifyMeasureEvaluator`` at the screening scope
``small``, the search's 300 ms paired timing against eager at the timing shape, no full-scope
confirmation) and evaluates the backend's shipped start ``--evals`` times, each time as a new
candidate (a comment line appended, so its hash and its kernel-cache key are new, as a search's
next candidate's are). Each evaluation prints its wall seconds, the timing's share and the rest
(verification, with compilation), the verdict and the speedup over eager; the checkouts run in the
order given, ``--rounds`` times (interleaved, so a warming machine is not put on one of them).

Usage (in the repository root; on the device after ``benchmarks/gpu_install.sh``)::

    python benchmarks/eval_cost_commits.py --backend triton --tasks rmsnorm \
        --src new=src --src old=.gpu/old_src [--evals 3] [--rounds 2] [--shape nominal|tiny]

Prints one line per evaluation and a summary of medians per checkout and task. Seconds are wall
clock; on a shared CPU machine they mostly say how busy it was.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(args: argparse.Namespace) -> None:
    """One checkout, one task: ``--evals`` evaluations, one JSON line each on stdout."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for
    from kstrata.tasks.loader import resolve_task
    from optimize_suite import TimedEvaluator

    task = resolve_task(args.child)
    backend = get_backend(args.backend)
    shape = task.full_shape(None) if args.shape == "nominal" else None
    pool = pool_for(backend)
    try:
        ev = TimedEvaluator(secret=os.urandom(16).hex(), baselines=("eager",), pool=pool, shape=shape,
                            confirm_scope=None)
        start = backend.initial_sources(task)
        for k in range(args.evals):
            sources = {level: f"{text}\n# eval_cost_commits: candidate {k}\n" for level, text in start.items()}
            before = dict(ev.times)
            t0 = time.perf_counter()
            evaluation, measurement = ev.evaluate(task, backend, sources)
            wall = time.perf_counter() - t0
            timing = ev.times.get("timing:eager", 0.0) - before.get("timing:eager", 0.0)
            speedup = None  # the measurement mapping's speedup over eager (a RatioCI; None when untimed)
            primary = ((measurement or {}).get("speedups") or {}).get("eager")
            if getattr(primary, "point", None) is not None:
                speedup = round(float(primary.point), 3)
            print(json.dumps({"k": k, "wall_s": round(wall, 2), "timing_s": round(timing, 2),
                              "verify_s": round(wall - timing, 2), "verdict": str(evaluation.verdict.value),
                              "speedup": speedup}), flush=True)
    finally:
        pool.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="triton")
    ap.add_argument("--tasks", default="rmsnorm")
    ap.add_argument("--src", action="append", default=[], help="LABEL=DIR, a checkout's src folder (repeat)")
    ap.add_argument("--evals", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--shape", choices=("nominal", "tiny"), default="nominal")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    if not args.src:
        ap.error("give at least one --src LABEL=DIR")
    srcs = []
    for s in args.src:
        label, _, d = s.partition("=")
        if not d or not (Path(d) / "kstrata").is_dir():
            ap.error(f"--src {s!r}: expected LABEL=DIR with DIR/kstrata a package folder")
        srcs.append((label, str(Path(d).resolve())))
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and Path(p).resolve() != (ROOT / "src").resolve()]
    print(f"# eval_cost_commits {time.strftime('%Y-%m-%dT%H:%M:%S')}; backend {args.backend}; shape {args.shape}; "
          f"evals {args.evals} x rounds {args.rounds}; nproc {os.cpu_count()}; load {os.getloadavg()}", flush=True)
    got: dict[tuple[str, str], list[dict]] = {}
    for r in range(args.rounds):
        for task in args.tasks.split(","):
            for label, d in srcs:
                env = {**os.environ, "PYTHONPATH": os.pathsep.join([d, *rest]), "PYTHONUNBUFFERED": "1"}
                cmd = [sys.executable, __file__, "--child", task, "--backend", args.backend,
                       "--evals", str(args.evals), "--shape", args.shape]
                t0 = time.perf_counter()
                p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=str(ROOT))
                lines = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
                for x in lines:
                    print(f"{label:8s} {task:16s} round {r} eval {x['k']}: {x['wall_s']:7.2f} s "
                          f"(timing {x['timing_s']:6.2f}, verify {x['verify_s']:6.2f}) {x['verdict']} "
                          f"x eager {x['speedup']}", flush=True)
                got.setdefault((label, task), []).extend(lines)
                if p.returncode:
                    print(f"{label:8s} {task:16s} exit {p.returncode}: " + " | ".join(p.stderr.splitlines()[-6:]))
                print(f"# {label} {task}: process {time.perf_counter() - t0:.1f} s", flush=True)
    print("# medians: label task wall timing verify (s), over evaluations")
    for (label, task), xs in got.items():
        if xs:
            med = {k: statistics.median(x[k] for x in xs) for k in ("wall_s", "timing_s", "verify_s")}
            print(f"{label:8s} {task:16s} {med['wall_s']:7.2f} {med['timing_s']:7.2f} {med['verify_s']:7.2f}")


if __name__ == "__main__":
    main()
