"""The dtype's atol is scaled to the outputs, and a float16/bfloat16 task's
reductions are allowed a float32 accumulator's error (red-team round of
2026-12-02: a float32 softmax over 4099 columns passed 4% off; a float16
softmax 5% too large passed at 512 columns)."""

from __future__ import annotations

import torch

from kstrata.tasks.loader import resolve_task
from kstrata.tasks.meta import Tolerance
from kstrata.verify.tolerance import compare, output_scale
from kstrata.verify.tolerance_reduction import reduction_allowance


def test_output_scale_is_the_largest_finite_value_up_to_one():
    assert output_scale(torch.tensor([0.5, -2e-3], dtype=torch.float64)) == 0.5
    assert output_scale(torch.tensor([3.0, -7.0], dtype=torch.float64)) == 1.0
    assert output_scale(torch.tensor([float("inf"), 1e-4], dtype=torch.float64)) == 1e-4
    assert output_scale(torch.zeros(0, dtype=torch.float64)) == 0.0


def test_a_softmax_four_percent_off_fails_and_its_float32_rounding_passes():
    x = torch.randn(3, 4099)
    o = torch.softmax(x.double(), -1)
    native = torch.softmax(x, -1)
    tol = Tolerance()
    assert compare(native, o, native, tol).ok
    assert compare(torch.softmax(x.flip(-1), -1).flip(-1), o, native, tol).ok  # another order
    assert not compare((native * 1.04), o, native, tol).ok
    assert not compare(torch.zeros_like(native), o, native, tol).ok
    # every output below the float32 atol: zeros passed a fixed atol; a task's own atol is used as given
    y = torch.rand(2, 262144)
    oy, ny = torch.softmax(y.double(), -1), torch.softmax(y, -1)
    assert float(oy.max()) < 1e-5
    assert not compare(torch.zeros_like(ny), oy, ny, Tolerance()).ok
    assert compare(torch.zeros_like(ny), oy, ny, Tolerance(atol=1e-5)).ok


def test_a_float16_softmax_is_allowed_a_float32_sum_not_a_float16_one():
    task = resolve_task("softmax_fp16")
    model, inputs, _, _ = task.instantiate({"B": 8, "D": 512}, 0)
    x = inputs[0]
    o = torch.softmax(x.double(), -1)
    native = model(x)
    wrong = (torch.softmax(x.float(), -1) * 1.05).to(x.dtype)
    m64 = torch.nn.Module()
    m64.forward = lambda t: torch.softmax(t, -1)
    extra32 = reduction_allowance(m64, [x.double()], [o], torch.float16)[0][0]
    extra16 = reduction_allowance(m64, [x.double()], [o], torch.float16, reduced_accumulation=True)[0][0]
    assert float(extra16.max()) > 100 * float(extra32.max())
    tol = task.meta.tolerance
    assert not compare(wrong, o, native, tol, extra32).ok
    assert compare(wrong, o, native, tol, extra16).ok  # the hole the float16 u left
    assert compare(torch.softmax(x.float(), -1).to(x.dtype), o, native, tol, extra32).ok
