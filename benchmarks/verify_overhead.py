"""Verification protocol time per task on the suite's small shapes (compile excluded).

Runs the full protocol (static checks, public stage, hidden stage with secret
perturbations; ``scope="small"``) on each suite task's initial ``pytorch``
candidate in one reused worker, and prints seconds per task minus candidate
load time. Target (issue #3): median < 2 s per level-1 task on a 2-core CPU.

With ``--breakdown``, the same protocol is also run in this process (the
judge's side; the candidate still runs in its own sandboxed process) with its
parts timed, twice per task: cold (the candidate's kernel cache removed
first, as for a new candidate) and warm (its second verification, which
finds the first one's Triton JIT cache, :mod:`kstrata.sandbox.kernel_cache`);
each candidate's two times and its cache files (kept, and compiled in that
run) are printed, and the judge's time is split by what it was spent on,
summed over the tasks, for each of the two: the static checks, the candidate process (start, load, and
the waits for its replies: both poison-pattern calls of every test, with the
run-time watch), test inputs, the reference, the float64 oracle, the
comparison (tolerance, the two runs' agreement, the caching check), the
dynamic probes of DSL backends and the weak-task check, and the requests that
compile a stage's shapes ahead (``KSTRATA_VERIFY_PREPARE=0`` turns them off,
for a before/after). Parts overlap where
one calls another (the comparison includes the domain check); "other" is the rest.

Usage: python benchmarks/verify_overhead.py [--level 1] [--scope small|full] [--backend NAME] [--tasks A,B]
       [--breakdown [--profile N]]
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import time

import torch

from kstrata.backends.registry import get_backend
from kstrata.backends.workers import pool_for
from kstrata.tasks.loader import suite
from kstrata.verify import prepare, verify_candidate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--level", type=int, default=1)
    ap.add_argument("--scope", default="small", choices=("small", "full"))
    ap.add_argument("--breakdown", action="store_true", help="also profile where the judge's time goes")
    ap.add_argument("--backend", default="pytorch",
                    help="candidates' backend: each task's shipped start for it (pytorch, pytorch-cuda, triton, ...); "
                         "tasks without one are skipped")
    ap.add_argument("--profile", type=int, default=0,
                    help="with --breakdown: also print the N functions of most cumulative time (cProfile)")
    ap.add_argument("--tasks", default="", help="comma-separated task names (default: every task of --level)")
    args = ap.parse_args()
    backend = get_backend(args.backend)
    print(f"# verify_overhead  {datetime.datetime.now().isoformat(timespec='seconds')}")
    gpu = ""
    if backend.device.startswith("cuda") and torch.cuda.is_available():
        gpu = f"; device {torch.cuda.get_device_name(0)}, torch.version.cuda {torch.version.cuda}"
    print(f"# cpu: {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads; "
          f"python {platform.python_version()}, torch {torch.__version__}; backend={args.backend}{gpu}; "
          f"scope={args.scope}; compile ahead {'on' if prepare.enabled() else 'off'} ({prepare.ENV})")
    print(f"{'task':<28}{'verdict':<10}{'tests':>7}{'protocol_s':>12}{'load_s':>9}")
    times = []
    chosen = [t for t in suite() if (t.name in args.tasks.split(",") if args.tasks else t.level == args.level)]
    with pool_for(backend) as pool:
        for task in chosen:
            try:
                sources = backend.initial_sources(task)
            except Exception as e:  # noqa: BLE001 - no shipped start for this backend: skipped, said
                print(f"{task.name:<28}skipped: {type(e).__name__}: {str(e)[:80]}")
                continue
            ev = verify_candidate(task, args.backend, sources, secret="bench", pool=pool, scope=args.scope)
            proto = ev.seconds - ev.load_seconds
            times.append(proto)
            print(f"{task.name:<28}{ev.verdict.value:<10}{ev.public_tests + ev.hidden_tests:>7}"
                  f"{proto:>12.3f}{ev.load_seconds:>9.3f}", flush=True)
            if ev.verdict.value != "correct":  # which check and where: a GPU-only failure is read from this line
                why = getattr(ev, 'message', None) or getattr(ev, 'error', None) or ev.feedback[:2]
                print(f"#   {task.name}: check {ev.check}; {' '.join(str(why).split())[:600]}", flush=True)
    target = 5 if backend.device.startswith("cuda") else 2
    print(f"# {len(times)} tasks: median {statistics.median(times):.3f} s, "
          f"max {max(times):.3f} s (target: median < {target} s)")
    if args.breakdown:
        breakdown(chosen, args.backend, args.scope, args.profile)


#: (label, attribute of kstrata.verify.runner timed: a function, or Class.method)
PARTS = (
    ("static checks", "_static_stage"),
    ("candidate process start (fork from the zygote)", "fresh"),
    ("candidate requests (load, calls of both poison patterns, runtime watch)", "Context.request"),
    ("compile ahead (a stage's builds at its start, kstrata.verify.prepare)", "prepare_stage"),
    ("reference run, with test inputs and the float64 oracle", "ShapeRun.prepare"),
    ("  of which test inputs", "ShapeRun.inputs"),
    ("  of which float64 oracle", "ShapeRun._oracle"),
    ("comparison (tolerance, run agreement, caching, domain)", "ShapeRun.judge"),
    ("dynamic probes (DSL backends)", "_dynamic_probes"),
    ("weak-task check", "weak_check"),
)


def breakdown(tasks: list, backend_name: str, scope: str, profile: int = 0) -> None:
    """Where the judge's time goes: the protocol run in this process (the
    candidate, ``backend_name``'s shipped start, still in its own sandboxed
    process) over ``tasks`` with each part of :data:`PARTS` wrapped in a
    wall-clock accumulator."""
    import functools

    from kstrata.verify import runner

    spent = {attr: 0.0 for _, attr in PARTS}

    def timed(attr: str, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[attr] += time.perf_counter() - t0
        return wrapper

    for _, attr in PARTS:
        owner, _, name = attr.rpartition(".")
        holder = getattr(runner, owner) if owner else runner
        setattr(holder, name, timed(attr, getattr(holder, name)))
    from kstrata.sandbox import kernel_cache

    backend = get_backend(backend_name)
    tasks = [t for t in tasks if _has_start(backend, t)]
    # the judge's own warm-up (imports, CUDA): another text, so another candidate with a cache of its own
    warmup = {k: v + "\n# verify_overhead warm-up\n" for k, v in backend.initial_sources(tasks[0]).items()}
    runner.run_protocol(tasks[0], backend_name, warmup, "bench", "strict", scope)
    import cProfile
    import pstats

    prof = cProfile.Profile()
    totals = {"cold": 0.0, "warm": 0.0}
    parts = {}
    rows = []
    for run in ("cold", "warm"):
        spent.update({k: 0.0 for k in spent})  # the warm-up run is not counted
        for task in tasks:
            sources = backend.initial_sources(task)
            key = kernel_cache.candidate_key(backend_name, sources)
            if run == "cold":  # the candidate's first process: no kernel cache of its own yet
                kernel_cache.archive_path(key).unlink(missing_ok=True)
            n = len(kernel_cache.HISTORY)
            t0 = time.perf_counter()
            if profile and run == "warm":
                prof.enable()
            runner.run_protocol(task, backend_name, sources, "bench", "strict", scope)
            if profile and run == "warm":
                prof.disable()
            dt = time.perf_counter() - t0
            totals[run] += dt
            mine = [h for h in kernel_cache.HISTORY[n:] if h["key"] == key]
            rows.append((task.name, run, dt, sum(h.get("files", 0) for h in mine),
                         sum(h.get("new", 0) for h in mine)))
        parts[run] = dict(spent)
    if profile:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(profile)
        pstats.Stats(prof).sort_stats("tottime").print_stats(profile)
    print("# per candidate: its first verification (cold: no kernel cache of its own) and its second (warm: the "
          "first one's compiler cache restored into its fresh sandboxed process, kstrata.sandbox.kernel_cache)")
    print(f"# {'task':<26}{'run':<6}{'protocol_s':>11}{'cache files':>13}{'compiled (new files)':>22}")
    for name, run, dt, files, new in rows:
        print(f"# {name:<26}{run:<6}{dt:>11.2f}{files:>13}{new:>22}")
    for run in ("cold", "warm"):
        total = totals[run] or 1e-9
        print(f"# where the judge's time goes, {run} ({len(tasks)} tasks, {total:.2f} s in all, run in one process)")
        accounted = 0.0
        for label, attr in PARTS:
            if not label.startswith(" "):
                accounted += parts[run][attr]
            print(f"#   {label:<72}{parts[run][attr]:>8.2f} s {100 * parts[run][attr] / total:>5.1f}%")
        rest = max(0.0, total - accounted)
        print(f"#   {'other (stage bookkeeping, feedback, batching)':<72}{rest:>8.2f} s {100 * rest / total:>5.1f}%")


def _has_start(backend, task) -> bool:
    try:
        backend.initial_sources(task)
    except NotImplementedError:
        return False
    return True


if __name__ == "__main__":
    main()
