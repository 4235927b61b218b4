"""A wrong constant scale under a right per-column bias is named (newcomer nc27, k8): a LayerNorm with
torch.var's unbiased variance read only "3961 of 4096 elements wrong" and the values, since its bias makes
output / expected vary from element to element; centred on its columns the output is sqrt(511/512) x expected."""

from __future__ import annotations

import torch

from kstrata.verify.feedback import describe_tensor


def _layernorm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, correction: int) -> torch.Tensor:
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, correction=correction)
    return (x - mu) / torch.sqrt(var + 1e-5) * w + b


def _items(rows: int, d: int, correction: int, bias: float = 0.1) -> dict[str, str]:
    torch.manual_seed(0)
    x, w, b = torch.randn(rows, d), 1 + 0.1 * torch.randn(d), bias * torch.randn(d)
    want = _layernorm(x.double(), w.double(), b.double(), 0)
    got = _layernorm(x, w, b, correction).double()
    bad = (got - want).abs() > 1e-5 + 1e-4 * want.abs()
    assert bool(bad.any())
    return {i["kind"]: i["text"] for i in describe_tensor(got, want, bad, {"max_err": 0.1}, [x, w, b])}


def test_unbiased_variance_under_a_bias_is_named_as_n_minus_1():
    items = _items(8, 512, 1)
    assert "constant_ratio" not in items, items
    text = items["offset_ratio"]
    assert "0.99902" in text and "r^2 = 511/512" in text and "512 - 1" in text, text
    assert "n - 1 (unbiased, torch.var's default)" in text and "per column" in text, text
    assert "r^2 = 76/77" in _items(5, 77, 1)["offset_ratio"]


def test_without_a_bias_the_constant_ratio_says_it_alone():
    items = _items(8, 512, 1, bias=0.0)
    assert "offset_ratio" not in items and "511/512" in items["constant_ratio"], items


def test_a_wrong_value_that_is_no_scale_gets_no_offset_ratio():
    torch.manual_seed(1)
    want = torch.randn(6, 40, dtype=torch.float64)
    got = want + 0.01 * torch.randn(6, 40, dtype=torch.float64)
    items = {i["kind"] for i in describe_tensor(got, want, torch.ones_like(want, dtype=torch.bool), {}, [want])}
    assert "offset_ratio" not in items
