"""The reordered-reduction allowance (issue #23): a correct candidate that sums
in another order than PyTorch passes where the plain bound failed it, and a
wrong one (a dropped term, an off-by-one count, a wrong scale) still fails."""

from __future__ import annotations

import numpy as np
import torch

from kstrata.tasks.meta import Tolerance
from kstrata.verify.tolerance import compare
from kstrata.verify.tolerance_reduction import LAMBDA, UNIT_ROUNDOFF, reduction_allowance

TOL = Tolerance()


def _seq_sum(x: torch.Tensor) -> torch.Tensor:
    """float32 sum along the last dim, left to right (the order a naive loop takes)."""
    return torch.from_numpy(np.add.accumulate(x.numpy(), axis=-1, dtype=np.float32)[..., -1].copy())


class RowSum(torch.nn.Module):
    def forward(self, x):
        return x.sum(-1)


class RowMean(torch.nn.Module):
    def forward(self, x):
        return x.mean(-1)


def _judge(model, x, cand):
    """(plain comparison ok, comparison with the allowance ok, allowance, terms)."""
    native = model(x)
    m64 = model.double()
    oracle = m64(x.double()).detach()
    extra, n = reduction_allowance(m64, [x.double()], [oracle], torch.float32)
    return compare(cand, oracle, native, TOL).ok, compare(cand, oracle, native, TOL, extra[0]).ok, extra[0], n


def test_the_allowance_is_the_probabilistic_bound_for_a_plain_sum():
    torch.manual_seed(0)
    x = torch.randn(4, 256)
    _, ok, extra, n = _judge(RowSum(), x, _seq_sum(x))
    assert ok and n == 256
    expect = LAMBDA * 256 ** 0.5 * UNIT_ROUNDOFF[torch.float32] * x.double().abs().sum(-1)
    # the sign draws move the one sum by exactly its bound; SAFETY doubles it
    assert torch.allclose(extra, 2 * expect, rtol=1e-9)


def test_wrong_reductions_are_still_caught():
    torch.manual_seed(1)
    x = torch.randn(8, 256)
    wrong = {
        "dropped term": x[:, 1:].sum(-1),
        "wrong scale": x.sum(-1) * 1.001,
        "off-by-one mean": x.sum(-1) / 255,
    }
    for name, cand in wrong.items():
        model = RowMean() if "mean" in name else RowSum()
        plain, with_allowance, _, _ = _judge(model, x, cand)
        assert not plain and not with_allowance, name


def _layer_norm_seq(x: torch.Tensor) -> torch.Tensor:
    """A correct LayerNorm without affine parameters whose mean and variance are
    float32 left-to-right sums (not PyTorch's order)."""
    n = x.shape[-1]
    mean = _seq_sum(x) / n
    d = x - mean[:, None]
    var = _seq_sum(d * d) / n
    return d / torch.sqrt(var + 1e-5)[:, None]


def test_a_correct_layer_norm_in_another_order_passes_where_the_plain_bound_fails():
    torch.manual_seed(2)
    model = torch.nn.LayerNorm(4096, elementwise_affine=False)
    x = torch.rand(8, 4096) - 10  # the shifted draw: mean / std ~ 35, terms cancel
    cand = _layer_norm_seq(x)
    plain, with_allowance, extra, n = _judge(model, x, cand)
    assert not plain and with_allowance and n == 4096
    # the same allowance still catches a wrong scale and a mean divided by n - 1
    assert not _judge(model, x, cand * 1.01)[1]
    xd = x.double()
    off = xd.sum(-1, keepdim=True) / 4095
    wrong_mean = (xd - off) / ((xd - off).pow(2).mean(-1, keepdim=True) + 1e-5).sqrt()
    assert not _judge(model, x, wrong_mean.float())[1]


def test_an_off_by_one_variance_is_caught_at_a_small_shape():
    """At the verifier's small shapes the allowance is small: a variance
    divided by n - 1 instead of n (relative 1/n) fails. (At n = 4096 that error,
    1.2e-4 relative, is below the fp32 rounding bound of the sums themselves,
    and the plain bound's rtol: no tolerance can tell it from rounding there.)"""
    torch.manual_seed(4)
    model = torch.nn.LayerNorm(64, elementwise_affine=False)
    x = torch.randn(16, 64)
    assert _judge(model, x, _layer_norm_seq(x))[1]
    xd = x.double()
    mean = xd.mean(-1, keepdim=True)
    off_by_one = (xd - mean) / ((xd - mean).pow(2).sum(-1, keepdim=True) / 63 + 1e-5).sqrt()
    plain, with_allowance, _, _ = _judge(model, x, off_by_one.float())
    assert not plain and not with_allowance


class CrossEntropy(torch.nn.Module):
    def forward(self, z, t):
        return torch.nn.functional.cross_entropy(z, t)


def test_cross_entropy_gets_an_allowance_from_its_log_sum_exp_and_batch_mean():
    torch.manual_seed(3)
    z, t = torch.rand(64, 257) * 1e-3, torch.randint(0, 257, (64,))  # the near_zero draw
    oracle = CrossEntropy()(z.double(), t)
    extra, n = reduction_allowance(CrossEntropy(), [z.double(), t], [oracle], torch.float32)
    assert n == 257 and extra[0] is not None and 0 < float(extra[0]) < 1e-3
    native = CrossEntropy()(z, t)
    # a log-sum-exp that misses a class, and a wrong scale, are wrong by far more
    for wrong in (torch.nn.functional.cross_entropy(z[:, :-1], t.clamp(max=255)), native * 1.001):
        assert not compare(wrong, oracle, native, TOL, extra[0]).ok
