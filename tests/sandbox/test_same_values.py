"""``redzone.same_values``: what an input must still hold after a call, NaN equal to NaN in the
same places; equal tensors are told in one pass (no NaN-free copies of a 50M-element input)."""

from __future__ import annotations

import math

import pytest
import torch

from kstrata.sandbox.redzone import same_values


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
def test_same_values_counts_nan_equal_in_the_same_places_only(dtype):
    x = torch.tensor([1.0, math.nan, -math.inf, 0.0], dtype=dtype)
    assert same_values(torch, x, x.clone())
    assert same_values(torch, torch.tensor([1.0, 2.0], dtype=dtype), torch.tensor([1.0, 2.0], dtype=dtype))
    for i, v in ((1, 0.0), (0, math.nan), (2, math.inf), (3, 2.0 ** -10)):
        y = x.clone()
        y[i] = v
        assert not same_values(torch, x, y) and not same_values(torch, y, x), (i, v)


def test_same_values_on_integers():
    x = torch.arange(7)
    y = x.clone()
    assert same_values(torch, x, y)
    y[3] = -1
    assert not same_values(torch, x, y)
