"""Verification protocol time per task on the suite's small shapes (compile excluded).

Runs the full protocol (static checks, public stage, hidden stage with secret
perturbations; ``scope="small"``) on each suite task's initial ``pytorch``
candidate in one reused worker, and prints seconds per task minus candidate
load time. Target (issue #3): median < 2 s per level-1 task on a 2-core CPU.

Usage: python benchmarks/verify_overhead.py [--level 1] [--scope small|full]
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics

import torch

from kstrata.backends.registry import get_backend
from kstrata.execute import WorkerPool
from kstrata.tasks.loader import suite
from kstrata.verify import verify_candidate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--level", type=int, default=1)
    ap.add_argument("--scope", default="small", choices=("small", "full"))
    args = ap.parse_args()
    backend = get_backend("pytorch")
    print(f"# verify_overhead  {datetime.datetime.now().isoformat(timespec='seconds')}")
    print(f"# cpu: {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads; "
          f"python {platform.python_version()}, torch {torch.__version__}; scope={args.scope}")
    print(f"{'task':<28}{'verdict':<10}{'tests':>7}{'protocol_s':>12}{'load_s':>9}")
    times = []
    with WorkerPool(size=1) as pool:
        for task in [t for t in suite() if t.level == args.level]:
            ev = verify_candidate(task, "pytorch", backend.initial_sources(task), secret="bench",
                                  pool=pool, scope=args.scope)
            proto = ev.seconds - ev.load_seconds
            times.append(proto)
            print(f"{task.name:<28}{ev.verdict.value:<10}{ev.public_tests + ev.hidden_tests:>7}"
                  f"{proto:>12.3f}{ev.load_seconds:>9.3f}", flush=True)
    print(f"# {len(times)} tasks: median {statistics.median(times):.3f} s, "
          f"max {max(times):.3f} s (target: median < 2 s)")


if __name__ == "__main__":
    main()
