"""Compile counts and verifier time of tvm-llvm candidates: per-shape (``# build: static``)
versus shape-generic (``# build: symbolic``, the default) builds.

Usage: ``python benchmarks/tvm_shape_generic.py [--tasks relu,rmsnorm]``

For each task and verifier scope it runs the verification protocol in-process
(``kstrata.verify.runner.run_protocol``, counting ``tvm.tirx.build`` calls with an
empty build cache) and then ``verify_candidate`` in a fresh worker twice (min/max
wall time, which includes starting the worker). Output committed as
``benchmarks/results/tvm_shape_generic.txt``.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="relu,rmsnorm")
    args = ap.parse_args()
    import tvm

    from kstrata.backends.registry import get_backend
    from kstrata.backends.tvm import backend as tvm_backend
    from kstrata.backends.tvm import build as tb
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import runner
    from kstrata.verify.api import verify_candidate

    calls = [0]
    real = tb.build_module

    def counted(*a, **k):
        calls[0] += 1
        return real(*a, **k)

    tb.build_module = counted
    print(f"# tvm shape-generic builds {datetime.date.today()} tvm={tvm.__version__}")
    print(f"{'scope':6s}{'task':10s}{'build':10s}{'compiles':>9s}{'in-process':>12s}{'verify_candidate':>22s}  verdict")
    for scope in ("small", "full"):
        for name in args.tasks.split(","):
            task = resolve_task(name)
            src = get_backend("tvm-llvm").initial_sources(task)
            for mode in ("static", "symbolic"):
                s = dict(src)
                s["graph"] = s["graph"].replace("# build: symbolic", f"# build: {mode}")
                tvm_backend._CACHE.clear()
                calls[0] = 0
                t = time.perf_counter()
                runner.run_protocol(task, "tvm-llvm", dict(s), "x", "strict", scope)
                t_in = time.perf_counter() - t
                ts = []
                for _ in range(2):
                    t = time.perf_counter()
                    ev = verify_candidate(task, "tvm-llvm", s, secret="x", scope=scope)
                    ts.append(time.perf_counter() - t)
                print(f"{scope:6s}{name:10s}{mode:10s}{calls[0]:9d}{t_in:11.2f}s"
                      f"{min(ts):12.2f}s /{max(ts):6.2f}s  {ev.verdict.value}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
