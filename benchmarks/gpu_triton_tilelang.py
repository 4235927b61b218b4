"""Triton and TileLang initial candidates on an NVIDIA GPU: verdict, time, speedups, roofline.

Run on the lent H200 from the repository root (torch + triton installed; TileLang
made importable per ../shared/gpu/README.md, e.g. ``--tilelang-path /tmp/kst-tl``)::

    python benchmarks/gpu_triton_tilelang.py [--tasks relu,softmax,...] [--tilelang-path DIR]

Each (task, backend) runs in a fresh subprocess, so a device fault (illegal
address, hang) in one candidate costs that row only. Times are medians of
``triton.testing.do_bench`` (CUDA events, L2 flushed between reps), in ms, at
the task's nominal shape.

Peaks (NVIDIA H200 Tensor Core GPU datasheet, SXM): HBM3e 4.8 TB/s; dense
FP16/BF16 Tensor Core ~989 TFLOP/s (1,979 with sparsity); FP32 (non-tensor)
~67 TFLOP/s.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

PEAK_BW = 4.8e12
PEAK_FLOPS = {"float32": 67e12, "float16": 989e12, "bfloat16": 989e12}
DEFAULT_TASKS = ("relu,gelu,silu,sigmoid,softmax,log_softmax,layernorm,rmsnorm,sum_dim,max_dim,"
                 "mean_dim,fused_exp_mean,matmul_square,matmul_square_fp16,matmul_bias_relu,"
                 "swiglu,sdpa,sdpa_fp16,quantize_per_tensor,fake_quant_per_token")


def one(task_name: str, backend: str) -> dict:
    """Verify and time one candidate (runs in its own process)."""
    import torch
    import triton.testing

    from kstrata import kernels
    from kstrata.backends.pytorch import load_model_new
    from kstrata.tasks.loader import resolve_task

    dsl = "triton" if backend == "triton" else "tilelang_cuda"  # GPU forms, else the CPU ones
    if dsl == "tilelang":
        os.environ["TILELANG_DEFAULT_TARGET"] = "cuda"
    src = kernels.initial_source(dsl, task_name)
    if src is None:
        return {"verdict": "no candidate"}
    task = resolve_task(task_name)
    shape = task.nominal_shape
    model, inputs, init, _ = task.instantiate(shape, 0)
    model = model.cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        want = model(*inputs)
    torch.manual_seed(0)
    try:
        cand = load_model_new(src, init, "cuda")
        if isinstance(cand, torch.nn.Module):
            cand.load_state_dict(model.state_dict())
        with torch.no_grad():
            got = cand(*inputs)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - a candidate failure is a row
        return {"verdict": "error", "error": f"{type(e).__name__}: {str(e)[:200]}"}
    tol = 1e-2 if task.meta.dtype in ("float16", "bfloat16") else 1e-3
    if want.dtype in (torch.int8, torch.int32, torch.int64):
        ok = bool((got.long() - want.long()).abs().max().item() <= 1) if want.numel() else True
    else:
        ok = bool(torch.allclose(got.float(), want.float(), atol=tol, rtol=tol))
    compiled = torch.compile(model)

    def bench(fn):
        with torch.no_grad():
            return triton.testing.do_bench(lambda: fn(*inputs), return_mode="median")

    t_c, t_e, t_tc = bench(cand), bench(model), bench(compiled)
    flops, nbytes = task.flops(shape), task.bytes(shape)
    ideal = max((flops or 0) / PEAK_FLOPS.get(task.meta.dtype, 67e12), (nbytes or 0) / PEAK_BW)
    return {"verdict": "correct" if ok else "incorrect", "ms": t_c, "eager_ms": t_e,
            "compile_ms": t_tc, "roofline": ideal / (t_c * 1e-3) if ideal else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default=DEFAULT_TASKS)
    ap.add_argument("--backends", default="triton,tilelang-cuda")
    ap.add_argument("--tilelang-path", default="", help="PYTHONPATH entry holding tilelang")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--one", nargs=2, metavar=("TASK", "BACKEND"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print("RESULT " + json.dumps(one(*args.one)))
        return
    import torch
    import triton

    print(f"date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}")
    print(f"device: {torch.cuda.get_device_name(0)}; python {platform.python_version()}; "
          f"torch {torch.__version__}; triton {triton.__version__}; cuda {torch.version.cuda}")
    print("timing: triton.testing.do_bench median (CUDA events, L2 flush), nominal shapes; "
          "roofline = max(FLOP/peak, bytes/4.8TB/s) / time")
    hdr = f"{'task':22} {'backend':14} {'verdict':10} {'ms':>9} {'x eager':>8} {'x compile':>9} {'roofline':>8}"
    print(hdr)
    print("-" * len(hdr))
    for task in args.tasks.split(","):
        for backend in args.backends.split(","):
            env = dict(os.environ)
            if backend.startswith("tilelang") and args.tilelang_path:
                env["PYTHONPATH"] = args.tilelang_path + os.pathsep + env.get("PYTHONPATH", "")
            try:
                p = subprocess.run([sys.executable, __file__, "--one", task, backend], env=env,
                                   capture_output=True, text=True, timeout=args.timeout)
                line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
                r = json.loads(line[-1][7:]) if line else {
                    "verdict": "crash", "error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
            except subprocess.TimeoutExpired:
                r = {"verdict": "timeout"}
            if "ms" in r:
                roof = f"{r['roofline']:.1%}" if r["roofline"] else "-"
                print(f"{task:22} {backend:14} {r['verdict']:10} {r['ms']:9.4f} "
                      f"{r['eager_ms'] / r['ms']:8.2f} {r['compile_ms'] / r['ms']:9.2f} {roof:>8}")
            else:
                print(f"{task:22} {backend:14} {r['verdict']:10} {r.get('error', '')}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
