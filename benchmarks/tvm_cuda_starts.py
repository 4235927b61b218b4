"""How fast is the tvm-cuda initial candidate of memory-bound tasks? (issue #18, item 3)

On the lent nvidia-h200, in the repository root (torch 2.11 and TVM 0.27 carried at
/tmp/kst-tvm; kstrata is not installed, it is imported from ./src):
    PYTHONPATH=/tmp/kst-tvm:$PWD/src python3 benchmarks/tvm_cuda_starts.py \\
        [--tasks relu,softmax,rmsnorm,layernorm,fused_exp_mean] [--before] [--reps 50]

For each task, at its nominal shape, in this process (kstrata's own initial candidates,
trusted: no sandbox, no judge): builds the tvm-cuda initial candidate the way the backend
does (``TVMCUDABackend.initial_sources`` then ``load``: graph fused ``rows``, default GPU
schedule, nvcc), checks its output against the task's PyTorch reference on the task's
inputs (same weights: both Models are built after the same ``torch.manual_seed``), and
times it, eager PyTorch and ``torch.compile`` with CUDA events: the median of ``--reps``
calls (each call timed alone, after 10 warm-up calls). Printed per task: the kernels per
forward and their launch shapes (grid x block, from TVM's own host code,
``kstrata.backends.tvm.build.launch_table``), whether the CUDA C uses 16-byte vector
accesses (float4) and a cross-thread reduction (warp shuffles), the build time (TVM build +
nvcc, s), the candidate's ms, x eager and x compile (> 1: the candidate is faster), and GB/s
(the task's minimum bytes, ``Task.bytes``, per candidate call). ``graph ms`` is the
candidate replayed from a CUDA graph (the GPU's time alone, without the Python runner's
per-call work), ``-`` when capture fails. The header gives the device's copy bandwidth
(``dst.copy_(src)`` of 256 MiB, read + write counted).

``--before`` adds a row per task built as the tvm-cuda start was before this change
(graph ``fusion: ops+tir``, every PrimFunc scheduled by dlight's first rule that applies,
Fallback included), for the before/after comparison on the same machine.

``--expansion`` also times the built-in proposer's GPU schedule variants of each start
(``schedule_variants(..., gpu=True)``, what one schedule expansion computes in its sandbox):
as shipped (each variant's build stops after code generation, ``build.codegen_only``) and
with every variant's CUDA C compiled, as it was before (the ~50 s per proposal of issue 18).
"""

from __future__ import annotations

import argparse
import datetime
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

DEFAULT_TASKS = "relu,softmax,rmsnorm,layernorm,fused_exp_mean"


def _events_ms(fn: Any, reps: int, warmup: int = 10) -> float:
    """Median of ``reps`` single-call CUDA-event timings of ``fn()``, in ms."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def _graph_ms(fn: Any, reps: int) -> float | None:
    """Median ms of ``fn`` replayed from a CUDA graph (None when capture fails)."""
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        return _events_ms(g.replay, reps)
    except Exception:  # noqa: BLE001 - a runner that cannot be captured: no graph time
        torch.cuda.synchronize()
        return None


def baselines(task: Any, shape: dict[str, int], reps: int, compile_: bool = True, graph: bool = False,
              ) -> tuple[list[Any], list[Any], torch.Tensor, float, float | None]:
    """``task``'s inputs at ``shape`` (seed 0, on the GPU), its init inputs, the
    reference output (weights drawn after ``torch.manual_seed(1)``, as a candidate's
    are), and the eager and ``torch.compile`` ms (:func:`_events_ms`, or with ``graph``
    :func:`_graph_ms` where the calls can be captured; None when compiling fails or
    ``compile_`` is off)."""

    def timed(fn: Any) -> float:
        return (_graph_ms(fn, reps) if graph else None) or _events_ms(fn, reps)

    _, inputs, init_inputs, module = task.instantiate(shape, seed=0)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in inputs]
    torch.manual_seed(1)
    model = module.Model(*init_inputs).eval().cuda()
    compile_ms = None
    with torch.no_grad():
        ref_out = model(*inputs)
        eager_ms = timed(lambda: model(*inputs))
        if compile_:
            try:
                compiled = torch.compile(model)
                compiled(*inputs)  # compiled outside a capture
                compile_ms = timed(lambda: compiled(*inputs))
            except Exception as e:  # noqa: BLE001 - no compiler toolchain: no compile column
                print(f"# {task.name}: torch.compile failed: {type(e).__name__}: {str(e)[:200]}")
    return inputs, init_inputs, ref_out, eager_ms, compile_ms


def check(out: Any, ref_out: torch.Tensor) -> str:
    """``ok`` when ``out`` (a tensor or a 1-tuple) has the reference's shape and its
    largest error is at most 1e-3 of the reference's largest magnitude (at least 1e-3),
    else ``WRONG(max err ...)``."""
    out = out[0] if isinstance(out, (tuple, list)) and len(out) == 1 else out
    if out.shape != ref_out.shape:
        return f"WRONG(shape {tuple(out.shape)})"
    err = (out.float() - ref_out.float()).abs().max().item()
    tol = 1e-3 * max(1.0, ref_out.float().abs().max().item())
    return "ok" if err <= tol else f"WRONG(max err {err:.2e})"


def copy_bandwidth() -> float:
    """GB/s of ``dst.copy_(src)`` over 256 MiB (bytes read + written)."""
    n = 1 << 26
    src, dst = torch.randn(n, device="cuda"), torch.empty(n, device="cuda")
    ms = _events_ms(lambda: dst.copy_(src), 50)
    return 2 * n * 4 / ms / 1e6


def before_sources(backend: Any, task: Any, sources: dict[str, str], shape: dict[str, int]) -> dict[str, str]:
    """The start as it was before issue 18's fix: ``fusion: ops+tir`` and dlight's first
    applicable rule (Fallback included) for every PrimFunc, as schedule text."""
    import tvm
    import tvm.s_tir.dlight as dl

    from kstrata.backends.tvm.lower import with_fusion
    from kstrata.backends.tvm.schedule import render_schedule, trace_lines

    graph = with_fusion(sources["graph"], "ops+tir")
    funcs = backend.lower(task, {"graph": graph}, shape).funcs
    target = backend.target()
    rules = [dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.LowBatchGEMV(), dl.gpu.Reduction(),
             dl.gpu.GeneralReduction(), dl.gpu.Transpose(), dl.gpu.Fallback()]
    per: dict[str, list[str]] = {}
    with target:
        for name, func in funcs.items():
            main = tvm.IRModule({"main": func.with_attr("dlight.do_not_tensorize", True)})["main"]
            for rule in rules:
                try:
                    sch = rule.apply(main, target, False)
                except Exception:  # noqa: BLE001 - the next rule
                    sch = None
                if sch is not None:
                    per[name] = trace_lines(sch)
                    break
    return {"graph": graph, "schedule": render_schedule(per, "before issue 18: dlight for every PrimFunc")}


def kernel_summary(backend: Any, task: Any, sources: dict[str, str], shape: dict[str, int]) -> tuple[str, str]:
    """(kernels per forward with their launch shapes, notes on the CUDA C)."""
    from kstrata.backends.tvm import build as tb

    lowered, funcs, _, _ = backend.scheduled_funcs(task, sources, shape)
    launch = tb.launch_table(funcs, backend.target())
    shapes = []
    for step in lowered.plan.steps:
        for k in launch[step["func"]]["kernels"]:
            g = "x".join(str(v) for v in k["grid"] if v > 1) or "1"
            b = "x".join(str(v) for v in k["block"] if v > 1) or "1"
            shapes.append(f"{g}*{b}")
    with tb.codegen_only(backend.target()):
        code = tb.generated_source(tb.build_module(funcs, backend.target()), "cuda")
    notes = [n for n, pat in (("float4", r"float4"), ("shfl", r"__shfl_")) if re.search(pat, code)]
    return f"{len(shapes)} [{' '.join(shapes)}]", ",".join(notes) or "scalar"


def row(backend: Any, task: Any, sources: dict[str, str], label: str, reps: int,
        eager_ms: float, compile_ms: float | None, ref_out: torch.Tensor, shape: dict[str, int],
        inputs: list[torch.Tensor], init_inputs: list[Any]) -> str:
    kernels, notes = kernel_summary(backend, task, sources, shape)
    torch.manual_seed(1)
    t0 = time.perf_counter()
    fn = backend.load(task, sources, shape, init_inputs)
    out = fn(*inputs)
    torch.cuda.synchronize()
    build_s = time.perf_counter() - t0
    ok = check(out, ref_out)
    ms = _events_ms(lambda: fn(*inputs), reps)
    gms = _graph_ms(lambda: fn(*inputs), reps)
    nbytes = task.bytes(shape) or 0
    return (f"{task.name:<16}{label:<8}{kernels:<34}{notes:<12}{ok:<8}{build_s:>7.1f}{ms:>9.4f}"
            f"{('%.4f' % gms) if gms is not None else '-':>10}{eager_ms / ms:>9.2f}"
            f"{(compile_ms / ms) if compile_ms else float('nan'):>10.2f}{nbytes / ms / 1e6:>9.0f}")


def expansion(backend: Any, task: Any, sources: dict[str, str], shape: dict[str, int]) -> str:
    """Seconds and variant counts of one GPU schedule expansion, codegen-only vs compiled."""
    import contextlib

    from kstrata.backends.tvm import build as tb
    from kstrata.backends.tvm.rules import schedule_variants

    funcs = backend.lower(task, sources, shape).funcs
    out = []
    for label in ("codegen-only", "compiled"):
        saved = tb.codegen_only
        if label == "compiled":
            tb.codegen_only = lambda target: contextlib.nullcontext()
        try:
            t0 = time.perf_counter()
            found = schedule_variants(funcs, sources["schedule"], gpu=True, target="cuda")
            out.append(f"{label} {time.perf_counter() - t0:.1f} s ({len(found)} variants)")
        finally:
            tb.codegen_only = saved
    return f"# {task.name}: expansion " + ", ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default=DEFAULT_TASKS)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--before", action="store_true", help="also time the start as it was before issue 18's fix")
    ap.add_argument("--expansion", action="store_true",
                    help="also time one GPU schedule expansion per task, codegen-only vs compiled")
    args = ap.parse_args()

    import tvm

    from kstrata.backends.registry import get_backend
    from kstrata.tasks.loader import resolve_task

    backend = get_backend("tvm-cuda")
    avail = backend.availability()
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    print(f"# tvm_cuda_starts {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; {smi}; "
          f"torch {torch.__version__}; tvm {tvm.__version__}; python {sys.version.split()[0]}")
    if not avail.usable:
        print(f"# tvm-cuda is not usable here: {avail.reason}")
        sys.exit(1)
    print(f"# copy bandwidth {copy_bandwidth():.0f} GB/s (256 MiB dst.copy_(src), read + write); "
          f"median of {args.reps} CUDA-event timings after 10 warm-up calls")
    print(f"{'task':<16}{'start':<8}{'kernels [grid*block]':<34}{'access':<12}{'check':<8}{'build s':>7}"
          f"{'ms':>9}{'graph ms':>10}{'x eager':>9}{'x compile':>10}{'GB/s':>9}")
    for name in args.tasks.split(","):
        task = resolve_task(name.strip())
        shape = task.full_shape(task.nominal_shape)
        inputs, init_inputs, ref_out, eager_ms, compile_ms = baselines(task, shape, args.reps)
        with torch.no_grad():
            sources = backend.initial_sources(task)
            variants = [("after", sources)]
            if args.before:
                variants.insert(0, ("before", before_sources(backend, task, sources, shape)))
            for label, src in variants:
                try:
                    print(row(backend, task, src, label, args.reps, eager_ms, compile_ms, ref_out, shape,
                              inputs, init_inputs), flush=True)
                except Exception as e:  # noqa: BLE001 - one task's failure is a row, not the end
                    print(f"{name:<16}{label:<8}failed: {type(e).__name__}: {str(e).splitlines()[0][:300]}",
                          flush=True)
        if args.expansion:
            print(expansion(backend, task, sources, shape), flush=True)
        print(f"{'':<16}{'eager':<8}{'':<63}{eager_ms:>9.4f}{'':>10}{1.0:>9.2f}"
              f"{(compile_ms / eager_ms) if compile_ms else float('nan'):>10.2f}"
              f"{(task.bytes(shape) or 0) / eager_ms / 1e6:>9.0f}", flush=True)


if __name__ == "__main__":
    main()
