"""Sums of nearly equal terms in the reordered-reduction allowance (issue #23
item 5): a float32 left-to-right sum of nearly equal terms rounds every
addition of a binade the same way and errs by about 0.1 * n * u * S, beyond
the probabilistic bound; the allowance adds the sum's worst-case bound
(Higham eq. (4.3), capped at gamma_{N_c - 1}), so such a correct sum passes,
while a dropped term, a count off by one and a wrong scale still fail, and a
left-to-right LayerNorm at four million terms (error 0.2 on outputs of size
1) still fails."""

from __future__ import annotations

import math

import numpy as np
import torch

from kstrata.tasks.meta import Tolerance
from kstrata.verify.tolerance import compare
from kstrata.verify.tolerance_reduction import (LAMBDA, SAFETY, UNIT_ROUNDOFF, gamma, reduction_allowance,
                                                worst_case_terms)

TOL = Tolerance()
U = UNIT_ROUNDOFF[torch.float32]


def _seq_sum(x: torch.Tensor) -> torch.Tensor:
    """float32 sum along the last dim, left to right (a naive loop's order)."""
    return torch.from_numpy(np.add.accumulate(x.numpy(), axis=-1, dtype=np.float32)[..., -1].copy())


class Mean(torch.nn.Module):
    def forward(self, x):
        return x.mean(-1)


class CrossEntropy(torch.nn.Module):
    def forward(self, z, t):
        return torch.nn.functional.cross_entropy(z, t)


def _allowance(model, inputs, oracle):
    extra, n = reduction_allowance(model, [x.double() if x.is_floating_point() else x for x in inputs],
                                   [oracle], torch.float32)
    return extra[0], n


def test_the_cap_keeps_a_dropped_term_and_an_off_by_one_count_out_of_reach():
    n_c = worst_case_terms(U)
    assert n_c == 2896 and worst_case_terms(UNIT_ROUNDOFF[torch.float16]) == 32
    assert SAFETY * gamma(n_c - 1, U) < 1 / n_c  # one term's share still exceeds the allowance
    assert gamma(1 << 30, U) == math.inf


def test_a_left_to_right_mean_of_nearly_equal_terms_passes():
    """The batch mean of cross-entropy on the near_zero draw at KernelBench's
    batch (95_CrossEntropyLoss): 32768 per-row losses of log(64) +- 1e-3
    summed left to right in float32 (error ~0.13 * n * u * S)."""
    n = 32768
    torch.manual_seed(0)
    z, t = torch.rand(n, 64) * 1e-3, torch.randint(0, 64, (n,))
    rows = torch.nn.functional.cross_entropy(z.double(), t, reduction="none").float()
    cand = _seq_sum(rows[None])[0] / n
    oracle = CrossEntropy()(z.double(), t)
    native = CrossEntropy()(z, t)
    err = abs(float(cand) - float(oracle))
    s = float(rows.double().abs().mean())
    assert err > SAFETY * LAMBDA * math.sqrt(n) * U * s  # the probabilistic bound alone fails it
    assert not compare(cand, oracle, native, TOL).ok
    extra, terms = _allowance(CrossEntropy(), [z, t], oracle)
    assert terms == n and compare(cand, oracle, native, TOL, extra).ok
    # a wrong scale still fails (a dropped row, 1/n = 3e-5, is within what the loop itself errs here)
    for wrong in (cand * 1.001, cand * 0):
        assert not compare(wrong, oracle, native, TOL, extra).ok


def test_wrong_means_of_nearly_equal_terms_are_caught_below_the_cap():
    torch.manual_seed(1)
    x = 8.3178 + torch.rand(4, 2048) * 1e-3
    oracle = Mean()(x.double())
    native = Mean()(x)
    extra, _ = _allowance(Mean(), [x], oracle)
    assert compare(_seq_sum(x) / 2048, oracle, native, TOL, extra).ok
    for wrong in (_seq_sum(x[:, 1:]) / 2048, _seq_sum(x) / 2047, _seq_sum(x) / 2048 * 1.0005, torch.zeros(4)):
        assert not compare(wrong, oracle, native, TOL, extra).ok


def test_centred_terms_keep_the_probabilistic_bound():
    torch.manual_seed(2)
    x = torch.randn(8, 2048)
    extra, _ = _allowance(Mean(), [x], Mean()(x.double()))
    expect = SAFETY * LAMBDA * math.sqrt(2048) * U * x.double().abs().mean(-1)
    assert torch.allclose(extra, expect, rtol=1e-9)


def _layer_norm_seq(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[-1]
    mean = _seq_sum(x) / n
    d = x - mean[:, None]
    return d / torch.sqrt(_seq_sum(d * d) / n + 1e-5)[:, None]


def test_a_left_to_right_layer_norm_over_four_million_shifted_terms_still_fails():
    """Past the cap nothing grows with n but the probabilistic bound: a
    LayerNorm whose mean is a float32 loop over 2^22 terms near -9.5 is off
    by ~0.2 on outputs of size 1 (PyTorch's: 3e-6), and stays incorrect."""
    torch.manual_seed(3)
    x = torch.rand(1, 1 << 22) - 10
    model = torch.nn.LayerNorm(1 << 22, elementwise_affine=False)
    oracle = model.double()(x.double()).detach()
    native = model.float()(x).detach()
    cand = _layer_norm_seq(x)
    err = float((cand.double() - oracle).abs().max())
    extra, n = _allowance(model.double(), [x], oracle)
    assert n == 1 << 22 and err > 0.1 and err > 3 * float(extra.max())
    assert not compare(cand, oracle, native, TOL, extra).ok


def test_a_mean_over_float32_values_far_from_zero_is_not_taken_as_exact():
    """float32 values near -9.5 lie on a 2^-20 grid and their mean |x| is
    below 2^4, but the mean's partial sums reach n * 9.5 and round: the
    grid draw's exactness test must weigh a mean's partial sums, not its
    result, or the allowance vanishes and the left-to-right LayerNorm over
    33^3 terms (the plain TVM import of 40_LayerNorm at its scaled shape, on
    the shifted draw) fails."""
    torch.manual_seed(0)
    x = (torch.rand(4, 33 ** 3).double() - 10).float()
    model = torch.nn.LayerNorm(33 ** 3, elementwise_affine=False)
    native = model(x).detach()
    oracle = model.double()(x.double()).detach()
    cand = _layer_norm_seq(x)
    assert not compare(cand, oracle, native, TOL).ok
    extra, _ = _allowance(model, [x], oracle)
    assert compare(cand, oracle, native, TOL, extra).ok
