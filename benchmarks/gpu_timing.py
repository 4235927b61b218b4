"""GPU timing path on a CUDA machine: eager and torch.compile baselines of a few
suite tasks, plus a simple Triton kernel, timed with kstrata's one timer.

Run on the lent GPU (the lead does this; output goes to
``benchmarks/results/gpu_timing.txt``)::

    python benchmarks/gpu_timing.py [--tasks rmsnorm,softmax,matmul_square,gelu] \
        [--budget-ms 500] [--graphs] [--out benchmarks/results/gpu_timing.txt]

For each task at its nominal shape it prints the eager median, the
torch.compile median and their paired speedup with a bootstrap CI (CUDA events
around a device-wide synchronize, 256 MiB L2 clear before every call, rotating
inputs), with and without CUDA-graph replay, the roofline position and a
suspicious flag when a time is under the roofline floor. A Triton vector add
checks the path on a hand-written kernel and an A/A row checks the noise.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import torch  # noqa: E402

from kstrata.measure import environment, roofline  # noqa: E402
from kstrata.measure.baselines import BaselineUnavailable, compiled  # noqa: E402
from kstrata.measure.timing import TimingConfig, measure  # noqa: E402
from kstrata.tasks.loader import resolve_task  # noqa: E402

DEFAULT_TASKS = "rmsnorm,softmax,layernorm,gelu,matmul_square,matmul_square_fp16,sdpa_fp16"


def triton_add():
    """A Triton vector add (the Triton tutorial 01 kernel) and its inputs, or None."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
                 mask=mask)

    def add(x, y):
        out = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return out

    n = 1 << 26  # 256 MiB per fp32 tensor
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    add(x, y)  # compile outside the timed region
    torch.testing.assert_close(add(x, y), x + y)
    return add, (lambda a, b: a + b), [x, y], 0.0, 3 * 4 * n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default=DEFAULT_TASKS)
    ap.add_argument("--budget-ms", type=float, default=500.0)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: this script is for the GPU machine")
        return 2
    dev = "cuda"
    lines: list[str] = []

    def emit(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    emit("kstrata gpu_timing: GPU timing path (CUDA events + device-wide sync, 256 MiB L2 clear, "
         "rotating inputs)")
    emit(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    emit(f"device: {environment.device_name(dev)}; clocks: {environment.gpu_clocks(0)}")
    emit("versions: " + ", ".join(f"{k} {v}" for k, v in environment.versions().items()))
    cfg = TimingConfig(budget_ms=args.budget_ms)
    cfg_graph = TimingConfig(budget_ms=args.budget_ms, cuda_graph=True)
    ceilings = {}
    for dtype in ("float32", "float16", "bfloat16"):
        c = roofline.measure_ceilings(dev, dtype)
        ceilings[dtype] = c
        emit(f"ceilings {dtype}: {c.bandwidth_gbs:.0f} GB/s copy, {c.gflops / 1e3:.1f} TFLOP/s matmul")
    emit()
    header = (f"{'task':22} {'mode':6} {'eager ms':>9} {'compile ms':>10} {'speedup [95% CI]':>26} "
              f"{'pairs':>5} {'eager roofline':>28}  notes")
    emit(header)
    for name in filter(None, args.tasks.split(",")):
        try:
            task = resolve_task(name)
            model, inputs, _, _ = task.instantiate(task.nominal_shape, seed=0)
            model = model.to(dev)
            inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in inputs]
            flops, nbytes = task.flops(), task.bytes()
            c = ceilings.get(task.meta.dtype, ceilings["float32"])
            floor = roofline.floor_ms(flops, nbytes, c)
            try:
                comp = compiled(model, inputs)
                comp_note = ""
            except BaselineUnavailable as e:
                comp, comp_note = None, str(e)[:60]
            for mode, conf in (("events", cfg), ("graph", cfg_graph)):
                try:
                    if comp is None:
                        m = measure(model, inputs, None, conf, device=dev)
                        eager_ms, comp_ms, sp = m.candidate.median, float("nan"), "-"
                    else:
                        # candidate = compile, baseline = eager: speedup = eager / compile
                        m = measure(comp, inputs, model, conf, device=dev, floor_ms=floor)
                        eager_ms, comp_ms = m.baseline.median, m.candidate.median
                        s = m.speedup
                        sp = f"{s.point:.3f}x [{s.low:.3f}, {s.high:.3f}]"
                    roof = roofline.analyze(eager_ms, flops, nbytes, c)
                    rtxt = (f"{roof.bound} {100 * roof.fraction:.0f}%" if roof.fraction is not None
                            else "-")
                    notes = [comp_note] if comp_note else []
                    notes += m.suspicious and ["SUSPICIOUS: under roofline floor"] or []
                    notes += ["noisy"] if m.noisy else []
                    emit(f"{name:22} {mode:6} {eager_ms:9.4f} {comp_ms:10.4f} {sp:>26} {m.reps:5d} "
                         f"{rtxt:>28}  {'; '.join(notes)}")
                except Exception as e:  # noqa: BLE001 - e.g. graph capture unsupported
                    emit(f"{name:22} {mode:6} failed: {type(e).__name__}: {str(e)[:80]}")
        except Exception as e:  # noqa: BLE001 - report and go on
            emit(f"{name:22} failed: {type(e).__name__}: {str(e)[:100]}")
            traceback.print_exc()
    emit()
    t = triton_add()
    if t is None:
        emit("triton: not installed")
    else:
        add, ref, inputs, flops, nbytes = t
        m = measure(add, inputs, ref, cfg, device=dev,
                    floor_ms=roofline.floor_ms(None, nbytes, ceilings["float32"]))
        roof = roofline.analyze(m.candidate.median, None, nbytes, ceilings["float32"])
        emit(f"triton vector add (2^26 fp32) vs torch add: triton {m.candidate.median:.4f} ms, "
             f"torch {m.baseline.median:.4f} ms, speedup {m.speedup.point:.3f}x "
             f"[{m.speedup.low:.3f}, {m.speedup.high:.3f}], {roof.describe()}"
             + ("; SUSPICIOUS" if m.suspicious else ""))
        aa = measure(add, inputs, add, cfg, device=dev)
        emit(f"A/A (triton add vs itself): {aa.speedup.point:.4f}x "
             f"[{aa.speedup.low:.4f}, {aa.speedup.high:.4f}] over {aa.reps} pairs")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
