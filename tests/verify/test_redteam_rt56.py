"""Red-team round rt56 (2026-12-05). Case folders ``cases/rt56_*`` (each ``expected.txt`` says what
it did before and why)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kstrata.sandbox import status

CASES = Path(__file__).parent / "cases"

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")


@needs_sandbox
@pytest.mark.parametrize("task,name", [("relu", "relu_inference_mode.py"),
                                       ("softmax", "softmax_inference_mode_two_outputs.py")])
def test_rt56_an_honest_forward_under_inference_mode_is_correct(kstrata_eval, task, name):
    # its outputs are inference tensors, which the harness's NaN poisoning between calls could not write
    # (runtime_error, "candidate raised RuntimeError: Inplace update to inference tensor ...")
    d = kstrata_eval(task, "rt56_inference_mode_output/" + name, "--scope", "small", "--no-time")
    assert d["verdict"] == "correct", f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"


@needs_sandbox
@pytest.mark.parametrize("name,verdict", [("relu_autotune.py", "correct"),
                                          ("relu_autotune_grid_ignores_block.py", "incorrect")])
def test_rt56_triton_autotune_runs_on_the_interpreter(kstrata_eval, name, verdict):
    # the autotuner benchmarked through a driver the interpreter lacks: every autotuned kernel read
    # runtime_error ("0 active drivers"); now it draws a config per tuning key, so a bad config is still found
    d = kstrata_eval("relu", "rt56_triton_autotune_interp/" + name, "--scope", "small", "--no-time",
                     backend="triton-interp")
    assert d["verdict"] == verdict, f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"


def test_rt56_the_interpreters_autotuner_draws_every_config():
    import subprocess
    import sys

    # in a process of its own: the patch is for the candidate's process, not this one
    code = """
import os
os.environ["TRITON_INTERPRET"] = "1"
from kstrata.backends.triton import fidelity
assert fidelity.interpret_autotune() and fidelity.interpret_autotune()
from triton.runtime.autotuner import Autotuner
bench = Autotuner.__new__(Autotuner).do_bench
best = {min(range(3), key=lambda i: bench(lambda: None, quantiles=(0.5, 0.2, 0.8))) for _ in range(64)}
assert best == {0, 1, 2}, best
# in a tuning round the configs come in turn: n shapes of one kernel run each of its n configs once (drawn
# independently, one config could be missed by every shape of a verification: 5.6% for 4 configs, 10 shapes)
import torch, triton, triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32, 64, 128)], key=["n"])
@triton.jit
def copy(x, y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + i, tl.load(x + i, mask=i < n), mask=i < n)

for n in (5, 77, 300, 1001):
    x = torch.randn(n)
    y = torch.empty_like(x)
    copy[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    assert torch.equal(x, y)
picked = sorted(c.kwargs["BLOCK"] for c in copy.cache.values())
assert picked == [16, 32, 64, 128], picked
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


@pytest.fixture(scope="module")
def tilelang_pool():
    from kstrata.backends import envs
    from kstrata.execute import WorkerPool

    ok, why = envs.env_ready("tilelang")
    if not ok:
        pytest.skip(f"no TileLang environment: {why}")
    with WorkerPool(size=1, python=str(envs.python_for("tilelang-c"))) as p:
        yield p


def test_rt56_tilelang_autotune_compiles_on_the_c_target(tilelang_pool):
    # its configs were timed with CUDA events: "Auto-tuning failed: No configuration successfully compiled"
    from kstrata.tasks.loader import resolve_task

    task = resolve_task("relu")
    source = (CASES / "rt56_tilelang_autotune_c" / "relu_autotune.py").read_text()
    # a comment of its own in the kernel's text: the autotuner's disk cache (keyed on that text) has no result
    source = source.replace("    @T.prim_func", f"    # {uuid.uuid4().hex}\n    @T.prim_func", 1)
    assert "# " in source.split("@T.prim_func")[0].splitlines()[-2]
    r = tilelang_pool.call("kstrata.backends.tilelang.check:check_candidate", "tilelang-c", str(task.path),
                           {"source": source}, {"B": 5, "D": 77}, timeout_s=300)
    assert r.ok, f"{r.kind}: {r.error}"
    assert r.value["ok"], r.value


@pytest.mark.slow
@needs_sandbox
def test_rt56_an_honest_tilelang_autotune_kernel_is_correct(kstrata_eval):
    # and leaves no thread behind (tqdm's monitor, started by the autotuner's progress bars: no_threads_left)
    d = kstrata_eval("relu", "rt56_tilelang_autotune_c/relu_autotune.py", "--scope", "small", "--no-time",
                     backend="tilelang-c")
    assert d["verdict"] == "correct", f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"


def test_rt56_hidden_draws_vary_inputs_of_one_value_the_distribution_left_alone():
    import torch

    from kstrata.tasks.inputs import draw_inputs

    def get_inputs():
        return [torch.randn(4, 8), torch.tensor([2.5 / 127]), torch.tensor([3], dtype=torch.int32),
                torch.tensor([0.5])]

    public, _ = draw_inputs(get_inputs, 3, "uniform", [0])
    assert public[1].item() == torch.tensor([2.5 / 127]).item() and public[3].item() == 0.5  # the task's values
    seen = set()
    for seed in range(8):
        hidden, _ = draw_inputs(get_inputs, seed, "uniform", [0], vary_scalar_inputs=True)
        s = hidden[1].item() / (2.5 / 127)
        assert 0.5 - 1e-6 <= s <= 2 + 1e-6 and hidden[1].dtype == torch.float32 and hidden[1].shape == (1,)
        assert hidden[2].item() == 3  # integers stay
        seen.add(round(s, 6))
    assert len(seen) == 8
    # the normal draw leaves every input as get_inputs() made it: its scalars vary too; a drawn one is not moved
    a, _ = draw_inputs(get_inputs, 5, "normal", None, vary_scalar_inputs=True)
    b, _ = draw_inputs(get_inputs, 5, "uniform", None, vary_scalar_inputs=True)
    assert a[3].item() != 0.5 and torch.equal(b[3], draw_inputs(get_inputs, 5, "uniform", None)[0][3])
    assert torch.equal(a[0], draw_inputs(get_inputs, 5, "normal", None)[0][0])  # a tensor of many values stays

    def per_channel():  # a per-channel scale filled with one number; a mask of ones
        return [torch.randn(6, 5), torch.full((6,), 0.02), torch.ones(6, 5)]

    c, _ = draw_inputs(per_channel, 2, "uniform", [0], vary_scalar_inputs=True)
    assert bool((c[1] == c[1][0]).all()) and c[1][0].item() != pytest.approx(0.02, rel=1e-6)
    assert torch.equal(c[2], torch.ones(6, 5))
    d, _ = draw_inputs(lambda: [torch.randn(3), 0.01, 4, True], 1, "uniform", None, vary_scalar_inputs=True)
    assert 0.005 <= d[1] <= 0.02 and d[1] != 0.01 and d[2:] == [4, True]  # a Python float too; ints, bools stay


@needs_sandbox
@pytest.mark.parametrize("task,name,verdict", [
    ("quantize_per_tensor", "quantize_scale_written_in.py", "incorrect"),
    ("dequantize_per_tensor", "dequantize_scale_written_in.py", "incorrect"),
    ("quantize_per_tensor", "quantize_honest.py", "correct"),
    ("task_leaky_relu_slope.py", "leaky_relu_slope_written_in.py", "incorrect"),
    ("task_leaky_relu_slope.py", "leaky_relu_honest.py", "correct")])
def test_rt56_a_scale_written_into_the_kernel_is_incorrect(kstrata_eval, task, name, verdict):
    # every test had the task's scale (a one-element input outside the distributions, a Python number): correct
    # before
    case = "rt56_scalar_input_written_in/"
    d = kstrata_eval(case + task if task.endswith(".py") else task, case + name, "--scope", "small", "--no-time")
    assert d["verdict"] == verdict, f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"


@pytest.mark.parametrize("mode", ["inference_mode", "no_grad"])
def test_rt56_the_modes_the_harness_enters_are_watched(mode):
    # the harness enters inference_mode (poisoning the previous outputs) and no_grad (around the call) in every
    # checked call: a replaced __enter__ would run candidate code there
    import torch

    from kstrata.verify.integrity.watch import RuntimeWatch

    w = RuntimeWatch()
    w.arm(None, skip=("kstrata.verify", "kstrata.tasks.inputs"))
    assert w.changed() == []
    cls = getattr(torch.autograd.grad_mode, mode)
    orig = cls.__dict__["__enter__"]
    cls.__enter__ = lambda self: orig(self)
    try:
        assert any("__enter__" in c for c in w.changed()), w.changed()
    finally:
        cls.__enter__ = orig
    assert w.changed() == []


@needs_sandbox
@pytest.mark.parametrize("task,name,verdict", [("gelu", "gelu_libdevice_erf.py", "correct"),
                                               ("silu", "silu_cuda_libdevice_exp.py", "correct"),
                                               ("gelu", "gelu_libdevice_tanh_approximation.py", "incorrect")])
def test_rt56_libdevice_runs_on_the_interpreter(kstrata_eval, task, name, verdict):
    # libdevice's functions were stubs there (None) or raised (extern_elementwise): honest kernels read runtime_error
    d = kstrata_eval(task, "rt56_libdevice_interp/" + name, "--scope", "small", "--no-time", backend="triton-interp")
    assert d["verdict"] == verdict, f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"


def test_rt56_libdevice_functions_on_the_interpreter():
    import subprocess
    import sys

    # in a process of its own: the patch is for the candidate's process, not this one
    r = subprocess.run([sys.executable, "-c", LIBDEVICE_KERNEL], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


LIBDEVICE_KERNEL = """
import os
os.environ["TRITON_INTERPRET"] = "1"
import numpy as np
import torch
import triton
import triton.language as tl
from kstrata.backends.triton.libdevice import interpret_libdevice
assert interpret_libdevice() and interpret_libdevice()
from triton.language.extra import libdevice


@triton.jit
def k(x_ptr, i_ptr, y_ptr, j_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    i = tl.load(i_ptr + offs, mask=m)
    y = libdevice.pow(libdevice.tanh(x), 2.0) + libdevice.atan2(x, 1.0) + libdevice.fast_expf(x)
    tl.store(y_ptr + offs, y, mask=m)
    tl.store(j_ptr + offs, libdevice.abs(i), mask=m)


x = torch.randn(37); i = torch.randint(-9, 9, (37,), dtype=torch.int32)
y = torch.empty_like(x); j = torch.empty_like(i)
k[(1,)](x, i, y, j, 37, BLOCK=64)
assert torch.allclose(y, torch.tanh(x) ** 2 + torch.atan2(x, torch.ones_like(x)) + torch.exp(x), atol=1e-5), (y,)
assert torch.equal(j, i.abs()) and y.dtype == torch.float32
print("ok")
"""
