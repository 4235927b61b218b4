"""Why kstrata's CPU workers set the thread-pool environment they do.

Times one ``tvm-llvm`` candidate (``relu`` with its outer loops parallel, at
the nominal 4096x4096 fp32) against eager PyTorch with the standard paired,
interleaved protocol (:func:`kstrata.measure.candidate.time_candidate`), in
worker pools that differ only in the thread-pool settings:

``kstrata default``  TVM_NUM_THREADS = OMP_NUM_THREADS = CPUs, OMP_WAIT_POLICY=PASSIVE,
                     TVM_THREAD_POOL_SPIN_COUNT=0 (what :func:`kstrata.execute.pool.worker_env` sets)
``spinning pools``   the same thread counts, both pools spin-wait (OpenMP ACTIVE, TVM's default spin)
``tvm 1 thread``     TVM's own default here (its physical-core count, 1 on a 2-vCPU VM)

Usage: ``python benchmarks/thread_pools.py`` (output: ``benchmarks/results/thread_pools.txt``).
"""

from __future__ import annotations

import datetime
import os
import platform

import torch

from kstrata.backends.registry import get_backend
from kstrata.backends.tvm.rules import schedule_variants
from kstrata.backends.workers import pool_for
from kstrata.measure.environment import cpu_name
from kstrata.measure.timing import TimingConfig
from kstrata.tasks.loader import resolve_task

SETTINGS = {
    "kstrata default": {},
    "spinning pools": {"OMP_WAIT_POLICY": "ACTIVE", "TVM_THREAD_POOL_SPIN_COUNT": "300000"},
    "tvm 1 thread": {"TVM_NUM_THREADS": "1"},
}


def main() -> None:
    import tvm

    backend = get_backend("tvm-llvm")
    task = resolve_task("relu")
    src = backend.initial_sources(task)
    lowered = backend.lower(task, src, task.nominal_shape)
    variant = next(v for v in schedule_variants(lowered.funcs, src["schedule"], rules=["parallel_vectorize"])
                   if v.description.startswith("parallel outer spatial"))
    cand = {**src, "schedule": variant.text}
    cfg = TimingConfig(budget_ms=1000.0)
    print(f"# thread_pools {datetime.datetime.now().isoformat(timespec='seconds')}")
    print(f"# host {platform.machine()} {cpu_name()}, {os.cpu_count()} CPUs; torch {torch.__version__}, "
          f"tvm {tvm.__version__}")
    print(f"# candidate: relu {task.nominal_shape} fp32, {variant.description}; paired vs eager, "
          f"budget {cfg.budget_ms:g} ms per measurement, 3 measurements per setting")
    print(f"{'setting':18s} {'candidate ms':>12s} {'eager ms':>9s} {'speedup':>8s}  env")
    for label, env in SETTINGS.items():
        with pool_for(backend, env=env) as pool:
            for _ in range(3):
                r = pool.call("kstrata.measure.candidate:time_candidate", backend.name, task, cand,
                              baseline="eager", config=cfg, with_roofline=False)
                m = r.value
                print(f"{label:18s} {m.candidate.median:>12.2f} {m.baseline.median:>9.2f} "
                      f"{m.speedup.point:>8.3f}  {env or '-'}", flush=True)


if __name__ == "__main__":
    main()
