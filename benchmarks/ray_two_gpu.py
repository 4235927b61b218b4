"""Verification and timing spread over every GPU of a host through the Ray executor.

For each (task, backend) the backend's initial candidate is verified
(``kstrata.verify.runner:run_protocol``, scope ``small``) and, when correct,
timed against eager PyTorch (``kstrata.measure.candidate:time_candidate``) as
Ray tasks of a :class:`kstrata.execute.ray_executor.RayExecutor` with
``num_gpus_per_task=1``: Ray places one candidate per GPU at a time, each call
runs in a kstrata worker inside the Ray worker (same timeout, isolation and
timing protocol as the local pool). The table shows the GPU and host that ran
each call, the verdict, the timing and each call's wall clock; then the wall
clock of the whole batch, the calls per GPU and, with ``--compare-local``, the
same batch run one after another through a local one-worker executor on GPU 0,
with any verdict that differs.

Not yet run: written for the lent ``nvidia-h200-x2`` (two H200s). Ray must be
importable there (carry its wheel as ``../shared/gpu/README.md`` describes for
TVM and TileLang). From the repository root::

    python benchmarks/ray_two_gpu.py --backends triton --compare-local \
        > benchmarks/results/ray_two_gpu.txt

``--address HOST:PORT`` joins a running cluster instead of starting Ray here.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from gpu_backends import sources_for  # noqa: E402  (the backend's initial candidate)

DEFAULT_TASKS = "relu,gelu,silu,softmax,layernorm,rmsnorm,sum_dim,matmul_square,matmul_square_fp16"
VERIFY = "kstrata.verify.runner:run_protocol"
TIME = "kstrata.measure.candidate:time_candidate"


def verdict_of(r) -> tuple[str, str]:
    """(verdict, check) of a verify CallResult."""
    from kstrata.verify import Evaluation

    if r.ok:
        ev = Evaluation.from_dict(r.value)
        return str(ev.verdict), ev.check or ""
    return {"timeout": "timeout"}.get(r.kind, "runtime_error"), r.kind


def run_batch(executors: dict, jobs: list, budget_ms: float) -> tuple[list[dict], float]:
    """Verify every job at once, then time the correct ones at once; rows and wall seconds."""
    from kstrata.measure.timing import TimingConfig

    cfg = TimingConfig(budget_ms=budget_ms, max_remeasure=1)
    start = time.perf_counter()
    verifying = [(job, executors[job[1].name].submit(VERIFY, job[0], job[1].name, dict(job[2]),
                                                     "ray-two-gpu", "strict", "small", timeout_s=900))
                 for job in jobs]
    timing, rows = [], []
    for (task, backend, sources), fut in verifying:
        r = fut.result()
        verdict, check = verdict_of(r)
        row = {"task": task.name, "backend": backend.name, "verdict": verdict, "check": check,
               "verify_gpu": ",".join(getattr(r, "gpu_ids", ())) or "-",
               "host": getattr(r, "hostname", "") or "local", "verify_s": r.wall_s}
        if not r.ok:  # keep why the call failed in the table (the error line, not only its kind)
            row["note"] = f"verify {r.kind}: {r.error}"[:80]
        rows.append(row)
        if verdict == "correct":
            timing.append((row, executors[backend.name].submit(
                TIME, backend.name, task, sources, baseline="eager", config=cfg, timeout_s=900)))
    for row, fut in timing:
        r = fut.result()
        row["time_gpu"] = ",".join(getattr(r, "gpu_ids", ())) or "-"
        row["time_s"] = r.wall_s
        if not r.ok:
            row["note"] = f"timing {r.kind}: {r.error}"[:80]
            continue
        m = r.value
        row["ms"] = m.candidate.median
        s = m.speedup
        row["vs_eager"] = f"{s.point:.3f}x [{s.low:.3f}, {s.high:.3f}]" if s else "-"
        if m.suspicious:
            row["note"] = "; ".join(map(str, m.suspicious))[:80]
    return rows, time.perf_counter() - start


def main() -> None:
    import torch

    from kstrata.backends.registry import get_backend
    from kstrata.execute.select import make_executor
    from kstrata.tasks.loader import resolve_task

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default=DEFAULT_TASKS)
    ap.add_argument("--backends", default="triton")
    ap.add_argument("--address", default=None, help="Ray cluster address (default: start Ray here)")
    ap.add_argument("--budget-ms", type=float, default=300.0)
    ap.add_argument("--gpus-per-task", type=float, default=1.0,
                    help="GPUs per device call (0 only to try the script on a CPU machine)")
    ap.add_argument("--extra-path", default="", help="PYTHONPATH entry holding the DSL (tilelang/tvm)")
    ap.add_argument("--compare-local", action="store_true",
                    help="also run the batch through a local one-worker executor and compare verdicts")
    args = ap.parse_args()

    env = {}
    if args.extra_path:
        from kstrata.execute.pool import worker_env

        env["PYTHONPATH"] = worker_env()["PYTHONPATH"] + os.pathsep + args.extra_path
    backends = [get_backend(b) for b in args.backends.split(",")]
    jobs = []
    for b in backends:
        for name in args.tasks.split(","):
            task = resolve_task(name)
            sources = sources_for(b, task)
            if sources is not None:
                jobs.append((task, b, sources))
    n_gpu = torch.cuda.device_count()
    dev = torch.cuda.get_device_name(0) if n_gpu else "no CUDA device"
    spec = "ray" + (f":{args.address}" if args.address else "")
    print("kstrata ray_two_gpu: verify (scope small) + paired timing vs eager, one candidate per GPU")
    print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; "
          f"devices: {n_gpu} x {dev}; executor: {spec}; jobs: {len(jobs)}")
    executors = {b.name: make_executor(spec, backend=b, num_gpus_per_task=args.gpus_per_task,
                                         env=env) for b in backends}
    try:
        import ray

        print(f"ray {ray.__version__}; cluster resources: "
              f"GPU {ray.cluster_resources().get('GPU', 0):g}, CPU {ray.cluster_resources().get('CPU', 0):g}")
        rows, wall = run_batch(executors, jobs, args.budget_ms)
    finally:
        for ex in reversed(list(executors.values())):  # the first one started Ray: stop it last
            ex.close()
    bw = max(10, *(len(r["backend"]) + 2 for r in rows)) if rows else 10
    head = (f"{'task':<20}{'backend':<{bw}}{'host':<12}{'vGPU':>5}{'tGPU':>5}  {'verdict':<22}"
            f"{'verify s':>9}{'time s':>8}{'ms':>10}  {'vs eager':<26}note")
    print(head)
    for r in rows:
        ms = f"{r['ms']:.4f}" if "ms" in r else "-"
        ts = f"{r['time_s']:.1f}" if "time_s" in r else "-"
        verdict = r["verdict"] + (f"/{r['check']}" if r["check"] and r["verdict"] != "correct" else "")
        print(f"{r['task']:<20}{r['backend']:<{bw}}{r['host'][:11]:<12}{r['verify_gpu']:>5}"
              f"{r.get('time_gpu', '-'):>5}  {verdict:<22}{r['verify_s']:>9.1f}{ts:>8}{ms:>10}  "
              f"{r.get('vs_eager', '-'):<26}{r.get('note', '')}", flush=True)
    per_gpu = collections.Counter(r["verify_gpu"] for r in rows)
    per_gpu.update(r["time_gpu"] for r in rows if "time_gpu" in r)
    print(f"ray: {len(rows)} candidates in {wall:.1f} s wall clock; calls per GPU: "
          + ", ".join(f"GPU {g}: {n}" for g, n in sorted(per_gpu.items())))
    if args.compare_local:
        local = {b.name: make_executor("local", backend=b, size=1,
                                       env={**env, "CUDA_VISIBLE_DEVICES": "0"}) for b in backends}
        try:
            local_rows, local_wall = run_batch(local, jobs, args.budget_ms)
        finally:
            for ex in local.values():
                ex.close()
        differ = [(a["task"], a["backend"], a["verdict"], b["verdict"])
                  for a, b in zip(rows, local_rows) if (a["verdict"], a["check"]) != (b["verdict"], b["check"])]
        print(f"local (one worker, GPU 0, one after another): {local_wall:.1f} s wall clock; "
              f"speed-up of the batch on Ray: {local_wall / wall:.2f}x")
        print("verdicts identical to local: " + ("yes" if not differ else f"NO: {differ}"))
        for a, b in zip(rows, local_rows):
            if "ms" in a and "ms" in b:
                print(f"  {a['task']:<20}{a['backend']:<10} median ms ray {a['ms']:.4f} "
                      f"local {b['ms']:.4f} ({a['ms'] / b['ms']:.3f})")


if __name__ == "__main__":
    main()
