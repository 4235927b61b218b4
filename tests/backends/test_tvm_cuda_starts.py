"""The tvm-cuda initial candidate of memory-bound tasks, read from the CUDA C
that TVM generates here (no GPU needed; issue 18): rmsnorm and fused_exp_mean
as one kernel with a cross-thread row reduction (``fusion: rows``), relu as
one kernel with 16-byte vector accesses, GEMMs left as they were, and the
CPU (tvm-llvm) lowering unchanged."""

from __future__ import annotations

import re

import pytest

from kstrata.backends.registry import get_backend
from kstrata.backends.tvm import build as tb
from kstrata.backends.tvm.coverage import run_once
from kstrata.backends.tvm.gpu_rules import ELEMENTWISE_DEFAULT, gpu_variants
from kstrata.backends.tvm.lower import with_fusion
from kstrata.tasks.loader import resolve_task


@pytest.fixture(scope="module")
def cuda():
    return get_backend("tvm-cuda")


def _start(cuda, name, shape=None):
    """(CUDA C, launch table, plan) of the tvm-cuda initial candidate at ``shape``
    (default: nominal)."""
    task = resolve_task(name)
    sources = cuda.initial_sources(task)
    lowered, funcs, _, failed = cuda.scheduled_funcs(task, sources, shape or task.nominal_shape)
    assert not failed
    code = tb.generated_source(tb.build_module(funcs, cuda.target()), "cuda")
    return code, tb.launch_table(funcs, cuda.target()), lowered.plan


def _kernels(code):
    """Definitions of ``__global__`` functions (not their declarations): name -> body."""
    out = {}
    for m in re.finditer(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(([^)]*)\) \{', code):
        end = code.find('\nextern "C" __global__', m.end())
        out[m.group(1)] = (m.group(2), code[m.end():end if end > 0 else len(code)])
    return out


@pytest.mark.parametrize("name", ["rmsnorm", "fused_exp_mean"])
def test_a_row_reduction_and_its_producers_are_one_kernel(cuda, name):
    task = resolve_task(name)
    code, launch, plan = _start(cuda, name)
    kernels = _kernels(code)
    assert len(kernels) == 1 and len(plan.steps) == 1, list(kernels)
    params, body = next(iter(kernels.values()))
    # no B x D intermediate passes through global memory: x (and the weight) in, the output out
    assert params.count("float*") == len(plan.inputs) + 1, params
    (entry,) = launch.values()
    (k,) = entry["kernels"]
    assert k["grid"][0] == task.nominal_shape["B"]  # a thread block per row
    assert k["block"][0] >= 128
    assert "__shfl_down_sync" in body and "__syncthreads" in body  # the row's sum across threads


def test_rmsnorm_graph_fuses_rows_only_on_gpu_targets(cuda):
    task = resolve_task("rmsnorm")
    assert "# fusion: rows" in cuda.initial_sources(task)["graph"]
    llvm = get_backend("tvm-llvm")
    graph = llvm.initial_sources(task)["graph"]
    assert "# fusion: ops+tir" in graph
    funcs = llvm.lower(task, {"graph": graph}, task.small_shapes[0]).funcs
    assert "power" in funcs and len(funcs) == 2  # the CPU lowering (and its PrimFunc names) as before


@pytest.mark.parametrize("name", ["rmsnorm", "fused_exp_mean", "softmax"])
def test_the_rows_fusion_computes_the_reference(name):
    """The fused PrimFunc (FuseTIR of the producer into the reduction), run on
    this CPU: the same function the GPU schedules bind to threads."""
    llvm = get_backend("tvm-llvm")
    task = resolve_task(name)
    sources = llvm.initial_sources(task)
    rows = {**sources, "graph": with_fusion(sources["graph"], "rows")}
    assert len(llvm.lower(task, rows, task.small_shapes[0]).funcs) == 1
    for shape in task.small_shapes[:2]:
        ok, why = run_once(llvm, task, rows, shape)
        assert ok, why


def test_relu_is_one_kernel_with_vector_accesses(cuda):
    code, launch, _ = _start(cuda, "relu")
    kernels = _kernels(code)
    assert len(kernels) == 1
    _, body = next(iter(kernels.values()))
    assert re.search(r"\*\(float4\*\)\(compute_ptr \+", body), body  # a float4 store
    assert re.search(r"\*\(float4\*\)\(x_ptr \+", body), body  # a float4 load
    (k,) = next(iter(launch.values()))["kernels"]
    assert k["block"][0] == ELEMENTWISE_DEFAULT["threads"]
    assert k["grid"][0] * k["block"][0] * ELEMENTWISE_DEFAULT["vec"] == 4096 * 4096


def test_relu_at_a_size_the_vector_width_does_not_divide_is_scalar(cuda):
    code, _, _ = _start(cuda, "relu", {"B": 7, "D": 77})
    assert len(_kernels(code)) == 1 and "float4" not in code


def test_a_gemm_keeps_its_producers_apart(cuda):
    """``rows`` fuses nothing into a GEMM (two operands along its reduction)."""
    task = resolve_task("matmul_bias_relu")
    sources = cuda.initial_sources(task)
    rows = cuda.lower(task, sources, task.nominal_shape).funcs
    plain = cuda.lower(task, {**sources, "graph": with_fusion(sources["graph"], "ops+tir")},
                       task.nominal_shape).funcs
    assert sorted(rows) == sorted(plain) == ["fused_matmul_add_relu", "transpose"]


def test_a_specialized_export_keeps_the_rows_choice_at_another_shape(cuda):
    """A graph torch.export specialized is re-exported per shape; the GPU
    backend's fusion choice in its header must survive that."""
    task = resolve_task("scaled_matmul_softmax")
    sources = cuda.initial_sources(task)
    for shape in (task.nominal_shape, task.small_shapes[0]):
        lowered = cuda.lower(task, sources, shape)
        assert lowered.header.fusion == "rows" and lowered.funcs


def test_the_default_elementwise_schedule_is_not_proposed_again(cuda):
    task = resolve_task("relu")
    sources = cuda.initial_sources(task)
    funcs = cuda.lower(task, sources, task.nominal_shape).funcs
    variants = gpu_variants(funcs, sources["schedule"], cuda.target())
    ew = [v for v in variants if v.rule == "gpu_elementwise"]
    words = f"{ELEMENTWISE_DEFAULT['threads']} threads per block, {ELEMENTWISE_DEFAULT['vec']} elements"
    assert ew and not any(words in v.description for v in ew)
    # its neighbours (one parameter changed) come first
    first = variants[0].description
    assert f"{ELEMENTWISE_DEFAULT['threads']} threads" in first or f"{ELEMENTWISE_DEFAULT['vec']} elements" in first


def test_codegen_only_stops_before_compiling_and_restores_the_callback():
    import tvm

    name = "tvm_callback_cuda_compile"
    before = tvm.get_global_func(name, allow_missing=True)
    calls = []

    def mine(code, *_):
        calls.append(code)
        return b"// mine\n"

    tvm.register_global_func(name, mine, override=True)
    try:
        with tb.codegen_only(tb.make_target("cuda")):
            assert bytes(tvm.get_global_func(name)("int x;")) == tb.NOT_COMPILED
        assert bytes(tvm.get_global_func(name)("int y;")) == b"// mine\n" and calls == ["int y;"]
        with tb.codegen_only(tb.make_target("llvm")):  # other targets: untouched
            assert bytes(tvm.get_global_func(name)("int z;")) == b"// mine\n"
    finally:
        if before is not None:
            tvm.register_global_func(name, before, override=True)
