"""Where the judge's time goes in one timing (:func:`kstrata.measure.candidate.time_candidate`).

Times one candidate (the backend's initial sources: for ``pytorch`` the task's
reference itself) against eager PyTorch at a given shape, in this process (the
judge's side: the candidate and the baseline run in their own sandboxed
processes, which this profile does not see), and prints

* the wall time of the whole call and of each judge phase (inclusive seconds
  and call counts; phases nest: ``check_last`` and ``probe`` contain
  ``after_call``, which contains ``replay`` and ``check``), measured by
  wrapping the functions named in :data:`PHASES`;
* with ``--cprofile``, the top entries of a :mod:`cProfile` profile sorted by
  cumulative time (the profiler slows Python-heavy phases; the phase times of
  a run without it are the ones to compare).

GitHub-style issue #18: at B=4096, C=32000 on an H100 one timing of a Triton
cross_entropy took 47-53 s, most of it the judge's own work around the
kernel (the freshen replay, the probes' oracles, input draws).

Usage::

    python benchmarks/timing_profile.py cross_entropy --shape B=1024,C=32000 \
        [--backend pytorch] [--cprofile] [--top 30] [--repeat 1]

Output goes to stdout; ``benchmarks/results/timing_profile_cpu.txt`` keeps
runs on the development VM (date, commit and machine printed first).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import functools
import io
import os
import platform
import pstats
import subprocess
import time
from collections import defaultdict
from typing import Any

#: ``(module, attribute)`` of each timed phase; a dotted attribute is a class's method.
PHASES = [
    ("kstrata.tasks.base", "Task.instantiate"),
    ("kstrata.measure.candidate", "distinct_input_sets"),
    ("kstrata.measure.candidate", "probe_sets"),
    ("kstrata.measure.candidate", "_remote"),
    ("kstrata.measure.remote", "RemoteCandidate.stage"),
    ("kstrata.measure.remote", "RemoteCandidate.calibrate"),
    ("kstrata.measure.remote", "RemoteCandidate.flush"),
    ("kstrata.measure.remote", "RemoteCandidate._restage"),
    ("kstrata.measure.remote", "RemoteCandidate.after_call"),
    ("kstrata.measure.remote", "RemoteCandidate.check_last"),
    ("kstrata.measure.remote", "RemoteCandidate.probe"),
    ("kstrata.measure.freshen", "replay"),
    ("kstrata.measure.timing", "measure_thunks"),
    ("kstrata.measure.timing", "measure"),
]

wall: dict[str, float] = defaultdict(float)
calls: dict[str, int] = defaultdict(int)


def _timed(name: str, fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            wall[name] += time.perf_counter() - t0
            calls[name] += 1

    return wrapper


def instrument() -> None:
    """Wrap every :data:`PHASES` function, and the checks ``_checker`` returns (``check``)."""
    import importlib

    for mod, attr in PHASES:
        m = importlib.import_module(mod)
        owner, name = (getattr(m, attr.split(".")[0]), attr.split(".")[1]) if "." in attr else (m, attr)
        setattr(owner, name, _timed(attr, getattr(owner, name)))
    import kstrata.measure.candidate as c

    make = c._checker
    c._checker = lambda *a, **k: _timed("check (oracle + compare)", make(*a, **k))


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("task")
    ap.add_argument("--shape", default="", help="e.g. B=1024,C=32000 (default: the task's nominal shape)")
    ap.add_argument("--backend", default="pytorch")
    ap.add_argument("--cprofile", action="store_true")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=1, help="timings in a row (the first starts the zygotes)")
    args = ap.parse_args()

    from kstrata.backends.registry import get_backend
    from kstrata.measure.candidate import time_candidate
    from kstrata.measure.environment import cpu_name
    from kstrata.tasks.loader import resolve_task

    instrument()
    task = resolve_task(args.task)
    b = get_backend(args.backend)
    shape = {k: int(v) for k, v in (kv.split("=") for kv in args.shape.split(",") if kv)} or None
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit()}, "
          f"{platform.node()}: {cpu_name()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print(f"# {task.name} {task.full_shape(shape)} backend {b.name} against eager")
    for r in range(args.repeat):
        wall.clear()
        calls.clear()
        prof = cProfile.Profile() if args.cprofile else None
        t0 = time.perf_counter()
        if prof:
            prof.enable()
        m = time_candidate(b.name, task, b.initial_sources(task), shape, baseline="eager")
        if prof:
            prof.disable()
        total = time.perf_counter() - t0
        print(f"\ntiming {r}: {total:.1f} s wall, {m.reps} pairs, {m.input_copies} copies, "
              f"{m.flush.get('timed_calls_checked')} checked calls, {m.flush.get('probes_checked')} probes, "
              f"speedup {m.speedup.point:.3f}" if m.speedup else "")
        print(f"  {'phase (inclusive)':32s} {'s':>8s} {'calls':>6s}")
        for name, s in sorted(wall.items(), key=lambda kv: -kv[1]):
            print(f"  {name:32s} {s:8.2f} {calls[name]:6d}")
        if prof:
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(args.top)
            print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:20000])


if __name__ == "__main__":
    main()
