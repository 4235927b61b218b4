"""The opt-in ``nonfinite`` input draw (:mod:`kstrata.tasks.inputs`): NaN and
infinities among the normal values, for tasks whose contract includes their
propagation."""

from __future__ import annotations

import pytest
import torch

from kstrata.tasks.inputs import NONFINITE_EVERY, apply_distribution
from kstrata.tasks.meta import DEFAULT_DISTRIBUTIONS, DISTRIBUTIONS, TaskMeta
from kstrata.verify.tolerance import compare


def _counts(t: torch.Tensor) -> tuple[int, int, int]:
    return int(t.isnan().sum()), int((t == float("inf")).sum()), int((t == float("-inf")).sum())


@pytest.mark.parametrize("shape,dtype", [((1, 3), torch.float32), ((5, 77), torch.float16), ((64, 300), torch.bfloat16)])
def test_the_draw_holds_nan_and_both_infinities_and_keeps_the_rest(shape, dtype):
    x = torch.randn(shape).to(dtype)
    (y,) = apply_distribution([x], "nonfinite", 7)
    nan, pos, neg = _counts(y)
    assert y.dtype == dtype and y.shape == x.shape and min(nan, pos, neg) >= 1
    assert nan + pos + neg <= max(3, x.numel() // NONFINITE_EVERY)
    fin = torch.isfinite(y)
    assert torch.equal(y[fin], x[fin])  # the normal draw elsewhere
    (z,) = apply_distribution([x], "nonfinite", 7)
    assert torch.equal(fin, torch.isfinite(z)) and torch.equal(y[fin], z[fin])  # reproducible


def test_it_is_opt_in():
    assert "nonfinite" in DISTRIBUTIONS and "nonfinite" not in DEFAULT_DISTRIBUTIONS
    assert "nonfinite" not in TaskMeta().distributions
    assert TaskMeta(distributions=("normal", "nonfinite")).distributions == ("normal", "nonfinite")


def test_a_kernel_that_does_not_propagate_nan_fails_the_comparison():
    (x,) = apply_distribution([torch.randn(8, 65)], "nonfinite", 1)
    oracle = torch.relu(x.double())
    assert compare(torch.relu(x), oracle, torch.relu(x), TaskMeta().tolerance).ok
    where = torch.where(x > 0, x, torch.zeros(()))  # NaN -> 0
    c = compare(where, oracle, torch.relu(x), TaskMeta().tolerance)
    assert not c.ok and c.stats["oracle_nonfinite_wrong"] == int(x.isnan().sum())
