"""What re-timing a doubtful would-be best costs: a new timing call per
re-timing (before) against re-timing in the call that took the first timing,
with the candidate and baseline processes it already built (after; #17).

The search re-times a would-be best whose timing stayed noisy or was flagged
(``VerifyMeasureEvaluator.retimes``, default 2). Before, each re-timing was a
whole :func:`kstrata.measure.candidate.time_candidate` call: the candidate
built again in a fresh candidate process (a TVM build), the eager reference's
process started again, the inputs drawn and the oracle computed again. Now
:func:`kstrata.measure.retime.retimed` re-times with what the first timing
built; each re-timing still stages the inputs, calibrates the round trip and
checks its own timed calls.

Both ways take the same timings: the search's timing settings (30 ms warm-up,
300 ms budget, one doubling re-measure) with the noise threshold set below
zero, so every timing is doubtful and both re-timings are always taken (what
a busy machine does to most timings; see optimize_suite_smoke.txt). Per task
(``tvm-llvm`` initial candidate at the CPU timing shape, against eager) and
round, ``before`` (3 calls) and ``after`` (1 call with 2 re-timings) run one
after the other, the order alternating per round, in this process. It
prints wall seconds per way (median over rounds) and how many times the
candidate was built.

Usage: python benchmarks/retime_cost.py [--tasks rmsnorm,gelu] [--rounds 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="rmsnorm,gelu")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="")
    args = ap.parse_args()

    from kstrata.backends.registry import get_backend
    from kstrata.measure import candidate as mc
    from kstrata.measure.timing import TimingConfig
    from kstrata.tasks.loader import resolve_task
    from kstrata.tasks.scaling import fitted_shape

    builds: list[str] = []
    real = mc._remote

    def counting(task, b, *a, **k):  # noqa: ANN001, ANN002, ANN003 - a pass-through counter
        builds.append(b.name)
        return real(task, b, *a, **k)

    mc._remote = counting
    config = TimingConfig(warmup_ms=30.0, budget_ms=300.0, max_remeasure=1, rel_iqr_threshold=-1.0)
    backend = get_backend("tvm-llvm")
    lines: list[str] = []

    def out(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    load = os.getloadavg()[0]
    out(f"# retime_cost {datetime.datetime.now().isoformat(timespec='seconds')}")
    out(f"# command: python benchmarks/retime_cost.py {' '.join(sys.argv[1:])}")
    out(f"# host: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} CPUs, "
        f"load average at start {load:.1f} (shared machine)")
    out("# before: 3 time_candidate calls (first + 2 re-timings, as the evaluator made them before)")
    out("# after: 1 time_candidate call with retimes=2 (re-timed with the processes it built)")
    out("# every timing forced doubtful (rel_iqr_threshold -1): both re-timings always taken")
    out()
    out(f"{'task':10} {'round':>5} {'before s':>9} {'after s':>8} {'builds before':>13} {'builds after':>12}")
    rows: dict[str, list[tuple[float, float]]] = {}
    for name in [t.strip() for t in args.tasks.split(",") if t.strip()]:
        task = resolve_task(name)
        shape = fitted_shape(task)
        sources = backend.initial_sources(task)
        mc.time_candidate(backend.name, task, sources, shape, config=config)  # warm: zygotes, caches
        for r in range(args.rounds):
            result: dict[str, tuple[float, int]] = {}
            for way in (("before", "after") if r % 2 == 0 else ("after", "before")):
                builds.clear()
                t0 = time.perf_counter()
                if way == "before":
                    for _ in range(3):
                        mc.time_candidate(backend.name, task, sources, shape, config=config)
                else:
                    m = mc.time_candidate(backend.name, task, sources, shape, config=config, retimes=2,
                                          retime_above=float("-inf"))
                    assert len(m.retimes) == 2, m.retimes
                result[way] = (time.perf_counter() - t0, builds.count(backend.name))
            rows.setdefault(name, []).append((result["before"][0], result["after"][0]))
            out(f"{name:10} {r:>5} {result['before'][0]:>9.1f} {result['after'][0]:>8.1f} "
                f"{result['before'][1]:>13} {result['after'][1]:>12}")
    out()
    out("## median over rounds (s per doubtful would-be best: its first timing and 2 re-timings)")
    for name, rr in rows.items():
        b = statistics.median(x for x, _ in rr)
        a = statistics.median(y for _, y in rr)
        out(f"{name:10} before {b:6.1f}  after {a:6.1f}  saved {b - a:5.1f} s ({(b - a) / b:.0%})")
    out(f"# load average at end {os.getloadavg()[0]:.1f}")
    if args.out:
        path = Path(args.out)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text("\n".join(lines) + "\n")
        os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
