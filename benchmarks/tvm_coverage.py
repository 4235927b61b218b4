"""Which suite tasks lower, build and run correctly on each TVM target.

Usage: ``python benchmarks/tvm_coverage.py [--targets tvm-llvm,tvm-opencl,tvm-cuda] [--tasks a,b]``

``tvm-llvm`` and ``tvm-opencl`` (PoCL) run every task at its small shapes against
the PyTorch reference (``torch.allclose`` at dtype tolerances); ``tvm-cuda``
without a GPU generates CUDA C and compiles it with ``nvcc --ptx``. Prints one
line per task and target, then a summary; the committed output is
``benchmarks/results/tvm_coverage.txt``.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys

from kstrata.backends.registry import get_backend
from kstrata.backends.tvm.coverage import check_task
from kstrata.tasks.loader import suite


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default="tvm-llvm,tvm-opencl,tvm-cuda")
    ap.add_argument("--tasks", default="")
    args = ap.parse_args()
    import torch
    import tvm

    tasks = suite()
    if args.tasks:
        wanted = set(args.tasks.split(","))
        tasks = [t for t in tasks if t.name in wanted]
    print(f"# tvm coverage {datetime.date.today()} tvm={tvm.__version__} torch={torch.__version__} "
          f"host={platform.machine()} {platform.processor() or ''}".rstrip())
    totals: dict[str, list[int]] = {}
    for name in args.targets.split(","):
        backend = get_backend(name)
        av = backend.availability()
        run = av.usable
        mode = "run vs reference" if run else f"generate{' + nvcc' if name == 'tvm-cuda' else ''} only ({av.reason})"
        print(f"\n## {name}: {mode}")
        for task in tasks:
            o = check_task(backend, task, run=run)
            totals.setdefault(name, [0, 0])
            totals[name][0] += o.status == "ok"
            totals[name][1] += 1
            print(f"{o.task:28s} {o.status:12s} {o.seconds:6.1f}s  {o.reason}".rstrip(), flush=True)
    print("\n## summary")
    for name, (ok, n) in totals.items():
        print(f"{name}: {ok}/{n} ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
