"""GPU proof for the Triton, TileLang and TVM-CUDA backends through kstrata's own
verifier and timer.

For each (task, backend): the backend's initial candidate is verified by
``kstrata.verify.verify_candidate`` (public + hidden stages, scope ``small``,
integrity checks) in a killable worker, then, when correct, timed by
``kstrata.measure.candidate.time_candidate`` in the same kind of worker against
eager PyTorch and ``torch.compile`` (CUDA events, device-wide synchronize,
256 MiB L2 clear, rotating inputs, paired A/B with a bootstrap interval). Every
(task, backend) gets a fresh worker pool, so a device fault costs one row.

Run on the lent H200 from the repository root, with the DSL importable through
``--extra-path`` (``/tmp/kst-tl`` for TileLang, ``/tmp/kst-tvm`` for TVM; see
``../shared/gpu/README.md``)::

    python benchmarks/gpu_backends.py --backends triton --tasks relu,softmax
    python benchmarks/gpu_backends.py --backends tvm-cuda --extra-path /tmp/kst-tvm
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DEFAULT_TASKS = ("relu,gelu,silu,softmax,log_softmax,layernorm,rmsnorm,sum_dim,fused_exp_mean,"
                 "matmul_square,matmul_square_fp16,matmul_bias_relu,swiglu,sdpa_fp16")


def sources_for(backend, task):
    """The backend's initial candidate for ``task`` (None when it has none)."""
    from kstrata import kernels

    if backend.name.startswith("triton"):
        text = kernels.initial_source("triton", task.name)
        return {"source": text} if text else None
    try:
        return backend.initial_sources(task)
    except NotImplementedError:
        return None


def row(task_name: str, backend_name: str, extra_path: str, budget_ms: float) -> dict:
    from kstrata.backends.registry import get_backend
    from kstrata.execute import WorkerPool
    from kstrata.execute.pool import worker_env
    from kstrata.measure.timing import TimingConfig
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import verify_candidate

    task = resolve_task(task_name)
    backend = get_backend(backend_name)
    sources = sources_for(backend, task)
    if sources is None:
        return {"verdict": "no candidate"}
    env = dict(getattr(backend, "worker_env", {}) or {})
    env["PYTHONPATH"] = worker_env()["PYTHONPATH"] + (os.pathsep + extra_path if extra_path else "")
    pool = WorkerPool(size=1, env=env)
    try:
        ev = verify_candidate(task, backend_name, sources, secret="gpu-bench", pool=pool, scope="small",
                              timeout_s=900)
        out = {"verdict": str(ev.verdict), "check": ev.check or "", "tests": f"{ev.public_tests}+{ev.hidden_tests}"}
        if str(ev.verdict) != "correct":
            out["note"] = str(ev.evidence.get("message", ""))[:90]
            return out
        cfg = TimingConfig(budget_ms=budget_ms, max_remeasure=1)
        for baseline in ("eager", "compile"):
            r = pool.call("kstrata.measure.candidate:time_candidate", backend_name, task, sources,
                          baseline=baseline, config=cfg, timeout_s=900)
            if not r.ok:
                out[baseline] = f"error: {r.error[:60]}"
                continue
            m = r.value
            s = m.speedup
            out["ms"] = m.candidate.median
            out[baseline] = f"{s.point:.3f}x [{s.low:.3f}, {s.high:.3f}]" if s else "-"
            point = ((m.roofline or {}).get("candidate") or {})
            if point.get("fraction") is not None:
                out["roofline"] = f"{point.get('bound', '?')} {100 * point['fraction']:.0f}%"
            if m.suspicious:
                out["note"] = "; ".join(map(str, m.suspicious))[:90]
        return out
    except Exception as e:  # noqa: BLE001 - one row's failure is reported, the rest go on
        return {"verdict": "bench error", "note": f"{type(e).__name__}: {e}"[:120]}
    finally:
        pool.close()


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default=DEFAULT_TASKS)
    ap.add_argument("--backends", default="triton")
    ap.add_argument("--extra-path", default="", help="PYTHONPATH entry holding the DSL (tilelang/tvm)")
    ap.add_argument("--budget-ms", type=float, default=300.0)
    args = ap.parse_args()
    versions = {"python": platform.python_version(), "torch": torch.__version__}
    for mod in ("triton", "tvm", "tilelang"):
        try:
            sys.path.insert(0, args.extra_path) if args.extra_path else None
            versions[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - not installed in this run
            pass
    dev = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA device"
    print(f"kstrata gpu_backends: verify (scope small) + paired timing vs eager and torch.compile")
    print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; device: {dev}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"{'task':<20}{'backend':<15}{'verdict':<15}{'tests':<8}{'ms':>9}  {'vs eager':<24}{'vs compile':<24}{'roofline':<14}note")
    for backend in args.backends.split(","):
        for task in args.tasks.split(","):
            r = row(task, backend, args.extra_path, args.budget_ms)
            ms = f"{r['ms']:.4f}" if "ms" in r else "-"
            verdict = r["verdict"] + (f"/{r['check']}" if r.get("check") else "")
            print(f"{task:<20}{backend:<15}{verdict:<15}{r.get('tests', ''):<8}{ms:>9}  "
                  f"{r.get('eager', '-'):<24}{r.get('compile', '-'):<24}{r.get('roofline', '-'):<14}"
                  f"{r.get('note', '')}", flush=True)


if __name__ == "__main__":
    main()
