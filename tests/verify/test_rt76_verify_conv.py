"""Red-team round rt76 (2026-12-06): convolutions of every kind get the product bound.

rt73 bounded a 1-D/2-D, one-group, not-transposed convolution by its left-to-right partial sums
(im2col); grouped, 3-D and transposed convolutions kept ``12 sqrt(K) u |W||x|``, and TF32 inputs read
within it (cases ``cases/rt76_grouped_conv_tf32``, ``rt76_conv3d_tf32``, ``rt76_conv_transpose_tf32``;
log ``benchmarks/results/redteam_rt76_verify.txt``). Now :func:`kstrata.verify.product_orders.
ordered_convolution_bound` bounds every ``aten.convolution`` by channel blocks.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from kstrata.tasks.inputs import apply_distribution
from kstrata.tasks.loader import resolve_task
from kstrata.verify.product_orders import ordered_convolution_bound
from kstrata.verify.tolerance import compare
from kstrata.verify.tolerance_reduction import reduction_allowance

CASES = Path(__file__).resolve().parent / "cases"
GROUPED = (CASES / "rt76_grouped_conv_tf32" / "grouped_conv2d.py",
           {"N": 1, "C_IN": 512, "C_OUT": 32, "H": 14, "W": 13, "KS": 3, "GROUPS": 2})
CONV3D = (CASES / "rt76_conv3d_tf32" / "conv3d.py", {"N": 1, "C_IN": 128, "C_OUT": 16, "D": 6, "H": 9, "W": 7, "KS": 3})
TRANSPOSED = (CASES / "rt76_conv_transpose_tf32" / "conv_transpose2d.py",
              {"N": 1, "C_IN": 256, "C_OUT": 16, "H": 14, "W": 13, "KS": 3})


def _tf32(t: torch.Tensor) -> torch.Tensor:
    """float32 rounded to TF32's 10 explicit mantissa bits."""
    return ((t.contiguous().view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


def _judged(case: tuple, dist: str, seed: int) -> tuple:
    """(task, float32 model, x, float64 oracle, float32 reference, allowance) of a case's task."""
    task = resolve_task(str(case[0]))
    model, inputs, _, _ = task.instantiate(case[1], seed)
    x = apply_distribution(inputs, dist, seed)[0]
    with torch.no_grad():
        oracle = model.double()(x.double())
        extra = reduction_allowance(model, [x.double()], [oracle], torch.float32, seed=seed)[0][0]
        model.float()
        return task, model, x, oracle, model(x), extra


def _conv(case: tuple, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if case is GROUPED:
        return F.conv2d(x, w, b, groups=2)
    return F.conv3d(x, w, b) if case is CONV3D else F.conv_transpose2d(x, w, b)


def _channel_blocks(case: tuple, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, size: int) -> torch.Tensor:
    """Honest float32: blocks of ``size`` input channels (of each group), their results added left to right."""
    if case is GROUPED:
        ci, co = x.shape[1] // 2, w.shape[0] // 2
        return torch.cat([_blocks(lambda lo, hi, g=g: F.conv2d(x[:, g * ci + lo:g * ci + hi],
                                                             w[g * co:(g + 1) * co, lo:hi]), ci, size)
                          + b[g * co:(g + 1) * co, None, None] for g in range(2)], 1)
    if case is CONV3D:
        return _blocks(lambda lo, hi: F.conv3d(x[:, lo:hi], w[:, lo:hi]), x.shape[1], size) + b[:, None, None, None]
    return _blocks(lambda lo, hi: F.conv_transpose2d(x[:, lo:hi], w[lo:hi]), x.shape[1], size) + b[:, None, None]


def _blocks(part, channels: int, size: int) -> torch.Tensor:
    y = part(0, size)
    for lo in range(size, channels, size):
        y = y + part(lo, lo + size)
    return y


@pytest.mark.parametrize("case", [GROUPED, CONV3D, TRANSPOSED], ids=["grouped", "conv3d", "transposed"])
@pytest.mark.parametrize("dist", ["normal", "uniform"])
def test_tf32_inputs_to_every_convolution_kind_fail(case, dist):
    """Before: grouped 0 of 11466 outputs out (every draw), 3-D 0, transposed 24 on normal, 9 on uniform."""
    task, model, x, oracle, ref, extra = _judged(case, dist, 1)
    c = model.conv
    with torch.no_grad():
        y = _conv(case, _tf32(x), _tf32(c.weight), c.bias)
    r = compare(y, oracle, ref, task.meta.tolerance, extra)
    assert not r.ok and r.stats["wrong"] > 100, (dist, r.stats)


@pytest.mark.parametrize("case", [GROUPED, CONV3D, TRANSPOSED], ids=["grouped", "conv3d", "transposed"])
@pytest.mark.parametrize("dist", ["normal", "uniform", "heavy_tailed", "large", "near_zero"])
def test_honest_channel_block_orders_stay_correct(case, dist):
    """float32 in blocks of 1 channel (left to right over channels) and of 32, and PyTorch's own: correct."""
    task, model, x, oracle, ref, extra = _judged(case, dist, 0)
    c = model.conv
    with torch.no_grad():
        for size in (1, 32):
            y = _channel_blocks(case, x, c.weight, c.bias, size)
            r = compare(y, oracle, ref, task.meta.tolerance, extra)
            assert r.ok, (dist, size, r.stats)


def test_the_convolution_bound_is_at_least_the_left_to_right_error_bound_shape():
    """The bound has the output's shape, is finite, and grows with the channels (a unit check)."""
    x, w = torch.randn(1, 64, 5, 5, dtype=torch.float64), torch.randn(8, 32, 3, 3, dtype=torch.float64)
    args = (x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 2)
    out = torch.ops.aten.convolution.default(*args)
    b = ordered_convolution_bound(args, out.shape, 2.0 ** -24, 6.0)
    assert b.shape == out.shape and torch.isfinite(b).all()
    wide = ordered_convolution_bound((x, torch.randn(8, 64, 3, 3, dtype=torch.float64), *args[2:8], 1),
                                     out.shape, 2.0 ** -24, 6.0)
    assert wide.mean() > b.mean() * math.sqrt(1.5)
    depthwise = (x, torch.randn(64, 1, 3, 3, dtype=torch.float64), *args[2:8], 64)
    assert ordered_convolution_bound(depthwise, (1, 64, 3, 3), 2.0 ** -24, 6.0) is None
