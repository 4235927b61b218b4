"""The shipped TileLang GPU forms (``kernels/tilelang_cuda``) on an NVIDIA GPU:
correct at the nominal shape and two odd ones, time against eager PyTorch.

Run on the lent H200 from the repository root, with TileLang importable (per
../shared/gpu/README.md, e.g. ``PYTHONPATH=/tmp/kst-tl``)::

    PYTHONPATH=/tmp/kst-tl:src python benchmarks/tilelang_cuda_check.py [--tasks relu,softmax,...]

One row per task, each task in a fresh subprocess (a device fault costs that
row only): ``ok`` at each shape, the candidate's ms at the nominal shape, the
speedup over eager PyTorch (``x eager``, > 1 is faster), and GB/s from the
task's byte count. Correct means: the float32 output is within
``atol = rtol = 1e-4`` of the float64 reference (the task's ``Model`` run in
float64 on the same inputs), or at most twice as far from it as eager float32
PyTorch is (a 4096-deep fp32 dot product is off by more than 1e-4 in either).
Times are medians of 50 ``torch.cuda.Event`` pairs after 10 warm-up calls,
L2 not flushed. The kernels are the shipped (trusted) files, loaded in this
process. Prints the table only; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

ATOL = RTOL = 1e-4
WARMUP, REPS = 10, 50


def odd_shapes(task, n: int = 2) -> list[dict[str, int]]:
    """The last ``n`` test shapes (small, then sweep) with an odd size in them."""
    odd = [s for s in [*task.small_shapes, *task.sweep_shapes] if any(v % 2 for v in s.values())]
    return odd[-n:]


def median_ms(fn, args) -> float:
    """Median of :data:`REPS` CUDA-event timings of ``fn(*args)``, in ms."""
    import torch

    with torch.no_grad():
        for _ in range(WARMUP):
            fn(*args)
        torch.cuda.synchronize()
        times = []
        for _ in range(REPS):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*args)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def check_shape(task, src: str, shape: dict[str, int]) -> tuple[bool, str, object, list]:
    """Load the GPU form, run it at ``shape``; (correct, note, candidate, inputs)."""
    import torch

    from kstrata.backends.pytorch import load_model_new

    model, inputs, init, _ = task.instantiate(shape, 0)
    model = model.cuda()
    dev = [x.cuda() if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        ref32 = model(*dev).float()
        ref64 = model.double()(*[x.double() if isinstance(x, torch.Tensor) else x for x in dev])
    model.float()
    torch.manual_seed(0)
    cand = load_model_new(src, init, "cuda", shape)
    if isinstance(cand, torch.nn.Module):
        cand.load_state_dict(model.state_dict())
    with torch.no_grad():
        got = cand(*dev)
    torch.cuda.synchronize()
    if tuple(got.shape) != tuple(ref64.shape):
        return False, f"shape {tuple(got.shape)} != {tuple(ref64.shape)}", cand, dev
    err = (got.double() - ref64).abs().max().item() if got.numel() else 0.0
    err_eager = (ref32.double() - ref64).abs().max().item() if got.numel() else 0.0
    ok = bool(torch.allclose(got.double(), ref64, atol=ATOL, rtol=RTOL)) or err <= 2 * err_eager
    return ok, f"err {err:.2g} (eager {err_eager:.2g})", cand, dev


def one(task_name: str) -> dict:
    """Check and time one task's GPU form (runs in its own process)."""
    import torch

    from kstrata import kernels
    from kstrata.tasks.loader import resolve_task

    os.environ["TILELANG_DEFAULT_TARGET"] = "cuda"
    src = kernels.initial_source("tilelang_cuda", task_name, fallback=False)
    if src is None:
        return {"error": "no GPU form"}
    task = resolve_task(task_name)
    shapes = [task.nominal_shape, *odd_shapes(task)]
    row: dict = {"shapes": [], "notes": []}
    timed = None
    for shape in shapes:
        try:
            ok, note, cand, dev = check_shape(task, src, shape)
        except Exception as e:  # noqa: BLE001 - a failing kernel is a row, not a crash
            ok, note, cand, dev = False, f"{type(e).__name__}: {str(e)[:160]}", None, None
        row["shapes"].append(ok)
        row["notes"].append(f"{shape}: {note}")
        if timed is None:
            timed = (cand, dev)
    cand, dev = timed
    if cand is not None:
        model, _, _, _ = task.instantiate(task.nominal_shape, 0)
        model = model.cuda()
        row["ms"] = median_ms(cand, dev)
        row["eager_ms"] = median_ms(model, dev)
        nbytes = task.bytes(task.nominal_shape)
        row["gbs"] = nbytes / (row["ms"] * 1e-3) / 1e9 if nbytes else None
    row["device"] = torch.cuda.get_device_name()
    return row


def main() -> None:
    from kstrata import kernels

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default=",".join(kernels.tasks_with_initial("tilelang_cuda", fallback=False)),
                    help="comma-separated task names (default: every shipped GPU form)")
    ap.add_argument("--one", default="", help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per task")
    args = ap.parse_args()
    if args.one:
        print("ROW " + json.dumps(one(args.one)))
        return
    print(f"{'task':20s} {'ok (nominal, odd, odd)':24s} {'ms':>9s} {'x eager':>8s} {'GB/s':>7s}  notes")
    for name in [t for t in args.tasks.split(",") if t]:
        try:
            p = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True,
                               text=True, timeout=args.timeout)
            line = next((ln for ln in p.stdout.splitlines() if ln.startswith("ROW ")), None)
            row = json.loads(line[4:]) if line else {"error": (p.stderr or p.stdout)[-300:]}
        except subprocess.TimeoutExpired:
            row = {"error": f"timed out after {args.timeout} s"}
        if "error" in row:
            print(f"{name:20s} {'-':24s} {'-':>9s} {'-':>8s} {'-':>7s}  {row['error']!r}")
            continue
        oks = ", ".join("yes" if ok else "NO" for ok in row["shapes"])
        ms, eager = row.get("ms"), row.get("eager_ms")
        cols = (f"{ms:9.4f} {eager / ms:7.2f}x {row['gbs'] or 0:7.0f}" if ms
                else f"{'-':>9s} {'-':>8s} {'-':>7s}")
        print(f"{name:20s} {oks:24s} {cols}  {'; '.join(row['notes'])}", flush=True)


if __name__ == "__main__":
    main()
