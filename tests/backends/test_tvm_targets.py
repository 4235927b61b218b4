"""tvm-opencl on PoCL, tvm-cuda code generation + nvcc, MetaSchedule tuning."""

from __future__ import annotations

import pytest

from kstrata.backends.registry import get_backend
from kstrata.backends.tvm.build import nvcc_compile, nvcc_path
from kstrata.backends.tvm.coverage import check_task, run_once
from kstrata.tasks.loader import resolve_task


@pytest.mark.parametrize("name", ["rmsnorm", "softmax", "matmul_square"])
def test_opencl_initial_candidate(opencl, name):
    task = resolve_task(name)
    outcome = check_task(opencl, task, task.small_shapes[:1])
    assert outcome.status == "ok", outcome.reason


def test_opencl_source_level_runs(opencl):
    task = resolve_task("rmsnorm")
    shape = task.small_shapes[0]
    sources = opencl.initial_sources(task)
    code = opencl.generate_source(task, sources, shape)
    assert "__kernel" in code and "kstrata-launch" in code
    ok, why = run_once(opencl, task, {**sources, "source": code}, shape)
    assert ok, why


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc not installed")
@pytest.mark.parametrize("name", ["rmsnorm", "matmul_square"])
def test_cuda_source_compiles_with_nvcc(name):
    cuda = get_backend("tvm-cuda")
    task = resolve_task(name)
    sources = cuda.initial_sources(task)
    code = cuda.generate_source(task, sources, task.small_shapes[0])
    assert "__global__" in code
    ptx = nvcc_compile(code, arch="sm_90", fmt="ptx")
    assert b".entry" in ptx
    assert "blockIdx" in cuda.materialize_schedule(task, sources, task.small_shapes[0])


def test_cuda_availability_says_why():
    av = get_backend("tvm-cuda").availability()
    import torch

    assert av.usable == torch.cuda.is_available() or not av.usable
    if not torch.cuda.is_available():
        assert "GPU" in av.reason


INTRINSICS_FOR = """
import sys, time
import tvm
from kstrata.backends.registry import get_backend
from kstrata.backends.tvm.tune import register_tensor_intrinsics
from tvm.s_tir import TensorIntrin
target = get_backend(sys.argv[1]).target()
t = time.process_time()
register_tensor_intrinsics(target)
cpu_s = time.process_time() - t
from tvm.s_tir.meta_schedule import TuneContext
TuneContext(target=target)  # its own import of the package is a no-op now
got = [n for n in ("dot_16x4_vnni", "dot_4x4_i8i8s32_sdot", "wmma_load_16x16x16_f16_a_shared")
       if TensorIntrin.get(n, allow_missing=True) is not None]
print(" ".join(got), "cuda" if "tvm.s_tir.tensor_intrin.cuda" in sys.modules else "-", round(cpu_s, 1))
"""


def test_tuning_for_llvm_registers_the_cpu_tensor_intrinsics_only(tmp_path):
    """MetaSchedule's tuning process registers the x86/ARM intrinsics an llvm
    target can tensorize with, not the CUDA/ROCm/Hexagon ones TVM's package
    import parses (70-100 s of CPU in each tuning process). A fresh interpreter:
    the registry is per process."""
    import subprocess
    import sys

    script = tmp_path / "intrinsics.py"
    script.write_text(INTRINSICS_FOR)

    p = subprocess.run([sys.executable, str(script), "tvm-llvm"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    *names, cuda, _ = p.stdout.split()
    assert names == ["dot_16x4_vnni", "dot_4x4_i8i8s32_sdot"] and cuda == "-"


@pytest.mark.slow
def test_metaschedule_tune_is_correct_and_cached(tmp_path):
    from kstrata.backends.tvm.tune import json_serialization_works, tune

    if not json_serialization_works():
        pytest.skip("tvm.ir.save_json segfaults with apache-tvm-ffi 0.1.15.x; MetaSchedule needs "
                    "apache-tvm-ffi==0.1.14.post1")
    task = resolve_task("relu")  # the smallest design space: the test is about the cache and rebuilds
    shape = task.small_shapes[0]
    r = tune(task, shape, trials=1, cache_dir=tmp_path)  # one trial, as the proposer's sandboxed test: 4 took 25 s of CI
    assert not r.cached and "schedule_" in r.sources["schedule"]
    assert "# build: static" in r.sources["graph"]
    ok, why = run_once(get_backend("tvm-llvm"), task, r.sources, shape)
    assert ok, why
    ok, why = run_once(get_backend("tvm-llvm"), task, r.sources, task.small_shapes[-1])  # rebuilt there
    assert ok, why
    assert tune(task, shape, trials=1, cache_dir=tmp_path).cached


def test_opencl_unit_reduction_workspace_is_launched(opencl):
    """Queue round rt63: mean_dim's shipped start failed to load at the hidden
    B=1, R=1, D=3 ("kernel mean_kernel argument x_red.data is neither a parameter
    nor a workspace"): the host allocates the float32 workspace as
    ``T.alloc_buffer((3,))``, dtype left out, which the launch table did not read."""
    task = resolve_task("mean_dim")
    shape = {"B": 1, "R": 1, "D": 3}
    sources = opencl.initial_sources(task)
    ok, why = run_once(opencl, task, sources, shape)
    assert ok, why
