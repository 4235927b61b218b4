"""Row-wise kernels on ``tvm-llvm`` against eager PyTorch on this CPU.

rmsnorm, softmax and layernorm (fp32, B=1024 x D=1024: the quick start's timing
shape on a 2-core machine), each candidate timed with kstrata's paired,
interleaved protocol (:func:`kstrata.measure.candidate.time_candidate`: a
sandboxed candidate process, eager PyTorch in a fresh process, caches flushed,
95% bootstrap interval of the speedup) in two builds:

``reassoc``  as kstrata builds it (:data:`kstrata.backends.tvm.build.LLVM_FAST_MATH`)
``ieee``     the same graph and schedule compiled without that flag (the
             target before it), timed as its LLVM ``source`` level

Candidates: the start (default graph, no schedule) and the composite recipes
of the built-in proposer's schedule expansion (:mod:`kstrata.backends.tvm.rules`)
on the graph the CPU graph rules propose first (``fusion: rows`` for rmsnorm,
the start's graph for the others), as a run would propose them.

Usage: ``python benchmarks/cpu_rows.py [--reps N] [--tasks a,b]`` (output:
``benchmarks/results/cpu_rows.txt``). Other work on the machine widens the
intervals; the load average is printed before each round.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform

import torch

from kstrata.backends.registry import get_backend
from kstrata.backends.tvm import build as tb
from kstrata.backends.tvm import isolated
from kstrata.backends.tvm.rules import COMPOSITE, graph_variants
from kstrata.backends.workers import pool_for
from kstrata.measure.environment import cpu_name
from kstrata.measure.timing import TimingConfig
from kstrata.tasks.loader import resolve_task

SHAPE = {"B": 1024, "D": 1024}


def candidates(backend, task) -> list[tuple[str, dict[str, str]]]:
    """(label, sources) of the start and of the first graph proposal's recipes."""
    start = backend.initial_sources(task)
    graph = next((v.text for v in graph_variants(start["graph"]) if "-> rows" in v.description), start["graph"])
    sources = {**start, "graph": graph}
    found, _ = isolated.schedule_expansion(task, sources, backend.name)
    out = [("start", start)]
    if graph != start["graph"]:
        out.append(("rows graph, no schedule", sources))
    out += [(f"{v['rule']}: {v['description'][:60]}", {**sources, "schedule": v["text"]})
            for v in found if all(r in COMPOSITE for r in v["rule"].split("+"))][:2]
    return out


def ieee_source(backend, task, sources: dict[str, str]) -> dict[str, str]:
    """``sources`` as LLVM IR compiled without :data:`~kstrata.backends.tvm.build.LLVM_FAST_MATH`."""
    saved = dict(tb.LLVM_FAST_MATH)
    tb.LLVM_FAST_MATH.clear()
    try:
        return {"source": backend.generate_source(task, sources, task.full_shape(SHAPE))}
    finally:
        tb.LLVM_FAST_MATH.update(saved)


def main() -> None:
    import tvm

    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--tasks", default="rmsnorm,softmax,layernorm")
    args = ap.parse_args()
    backend = get_backend("tvm-llvm")
    cfg = TimingConfig(budget_ms=1000.0)
    print(f"# cpu_rows {datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')}")
    print(f"# host {platform.machine()} {cpu_name()}, {os.cpu_count()} CPUs; torch {torch.__version__}, "
          f"tvm {tvm.__version__}; target {tb.make_target('llvm')}")
    print(f"# shape {SHAPE} fp32; paired vs eager, budget {cfg.budget_ms:g} ms per measurement; "
          "speedup = eager / candidate, median [95% interval]")
    jobs = []
    for name in args.tasks.split(","):
        task = resolve_task(name)
        for label, sources in candidates(backend, task):
            jobs.append((name, task, "reassoc", label, sources))
            jobs.append((name, task, "ieee", label, ieee_source(backend, task, sources)))
    with pool_for(backend) as pool:
        for rep in range(args.reps):
            print(f"# round {rep + 1}, load average {os.getloadavg()[0]:.1f}", flush=True)
            for name, task, build, label, sources in jobs:
                r = pool.call("kstrata.measure.candidate:time_candidate", backend.name, task, sources, SHAPE,
                              baseline="eager", config=cfg, with_roofline=False)
                m = r.value
                if m is None:
                    print(f"{name:10s} {build:7s} error {str(r)[:200]}  {label}", flush=True)
                    continue
                s = m.speedup
                print(f"{name:10s} {build:7s} {s.point:5.2f}x [{s.low:.2f}, {s.high:.2f}]  "
                      f"cand {m.candidate.median:6.2f} ms  eager {m.baseline.median:6.2f} ms  {label}", flush=True)


if __name__ == "__main__":
    main()
