"""The shipped TileLang GPU forms (``kernels/tilelang_cuda``) without a GPU:
each lowers to CUDA and compiles with nvcc at its task's nominal shape and two
odd ones (``check.lower_for_cuda`` in a worker of the TileLang environment);
their ``SCHEDULE`` lines declare GPU parameters; ``tilelang-cuda`` starts from
them and ``tilelang-c`` from the CPU forms.

Whether they are correct and fast on a GPU is ``benchmarks/tilelang_cuda_check.py``'s
job (run on the lent H200).
"""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest

from kstrata import kernels
from kstrata.backends import envs
from kstrata.backends.registry import get_backend
from kstrata.backends.tilelang.tune_rules import declared
from kstrata.execute import WorkerPool
from kstrata.tasks.loader import resolve_task

GPU_FORMS = kernels.tasks_with_initial("tilelang_cuda", fallback=False)
LOWER = "kstrata.backends.tilelang.check:lower_for_cuda"


def odd_shapes(task, n=2):
    """The last ``n`` test shapes with an odd size (tails in every guard)."""
    odd = [s for s in [*task.small_shapes, *task.sweep_shapes] if any(v % 2 for v in s.values())]
    return odd[-n:]


@pytest.fixture(scope="module")
def pool():
    ok, why = envs.env_ready("tilelang")
    if not ok:
        pytest.skip(f"no TileLang environment ({why}); create it with `kstrata setup tilelang`")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not on PATH: TileLang's CUDA kernels cannot be compiled here")
    with WorkerPool(size=1, python=str(envs.python_for("tilelang-cuda"))) as p:
        yield p


def test_every_cpu_form_has_a_gpu_form():
    assert GPU_FORMS == kernels.tasks_with_initial("tilelang")
    assert len(GPU_FORMS) >= 13


#: the forms CI lowers and compiles (5-10 s each with nvcc); the rest under pytest -m heavy
CI_FORMS = ("softmax", "rmsnorm", "matmul_square", "fused_exp_mean")


@pytest.mark.parametrize("name", [n if n in CI_FORMS else pytest.param(n, marks=pytest.mark.heavy) for n in GPU_FORMS])
def test_gpu_form_lowers_and_compiles_for_cuda(pool, name):
    task = resolve_task(name)
    source = kernels.initial_source("tilelang_cuda", name, fallback=False)
    for shape in [task.nominal_shape, *odd_shapes(task)]:
        r = pool.call(LOWER, str(task.path), source, shape, timeout_s=600)
        assert r.ok, f"{r.kind}: {r.error}\n{r.traceback}"
        res = r.value
        assert res["ok"], f"{name} {shape}: {res['error'][-3000:]}"
        assert res["kernels"] and all(k["global"] and k["cubin_bytes"] > 0 for k in res["kernels"])
        assert res["shape"] == res["want_shape"]


def test_lowering_failure_is_reported(pool):
    task = resolve_task("softmax")
    source = kernels.initial_source("tilelang_cuda", "softmax", fallback=False)
    # a C++ keyword as a TileLang local: lowers, but nvcc rejects the CUDA source
    bad = source.replace("cur_max", "new")
    res = pool.call(LOWER, str(task.path), bad, {"B": 5, "D": 77}, timeout_s=600).value
    assert not res["ok"] and "Compilation error" in res["error"]
    # a kernel that never runs is no evidence
    idle = source.replace("kernel = softmax_kernel(", "return x\n        kernel = softmax_kernel(")
    res = pool.call(LOWER, str(task.path), idle, {"B": 5, "D": 77}, timeout_s=600).value
    assert not res["ok"] and res["error"] == "no TileLang kernel was called"


@pytest.mark.parametrize("name", GPU_FORMS)
def test_schedule_line_declares_gpu_parameters(name):
    source = kernels.initial_source("tilelang_cuda", name, fallback=False)
    params = declared(source, "cuda")
    assert "threads" in params and any(k.startswith("block") for k in params), params
    for key, (choices, value) in params.items():
        assert value in choices, (key, value, choices)  # the start value is a move's origin
    assert source.startswith('"""Fusion plan: ')


def test_initial_sources_pick_the_form_of_the_target(tmp_path, monkeypatch):
    task = resolve_task("softmax")
    gpu = get_backend("tilelang-cuda").initial_sources(task)["source"]
    cpu = get_backend("tilelang-c").initial_sources(task)["source"]
    assert gpu == (kernels.ROOT / "tilelang_cuda" / "softmax.py").read_text()
    assert cpu == (kernels.ROOT / "tilelang" / "softmax.py").read_text()
    assert "T.Parallel" in gpu and "T.Parallel" not in cpu
    # a task with only a CPU form: tilelang-cuda falls back to it
    for folder in ("tilelang", "tilelang_cuda"):
        (tmp_path / folder).mkdir()
    (tmp_path / "tilelang" / "only_cpu.py").write_text('"""Fusion plan: cpu."""\n')
    monkeypatch.setattr(kernels, "ROOT", tmp_path)
    assert kernels.initial_path("tilelang_cuda", "only_cpu") == tmp_path / "tilelang" / "only_cpu.py"
    assert kernels.initial_path("tilelang_cuda", "only_cpu", fallback=False) is None
    assert kernels.tasks_with_initial("tilelang_cuda") == ["only_cpu"]
    assert kernels.tasks_with_initial("tilelang_cuda", fallback=False) == []
    only_cpu = SimpleNamespace(name="only_cpu")
    assert get_backend("tilelang-cuda").initial_sources(only_cpu)["graph"] == "Fusion plan: cpu."
    with pytest.raises(ValueError, match="unknown DSL"):
        kernels.initial_path("cuda", "softmax")
