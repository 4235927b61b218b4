"""A scale applied along the wrong axis is named (queue rounds rt66/rt69 and
newcomer nc23 left it open: only the wrong values were listed)."""

from __future__ import annotations

import torch

from kstrata.verify.feedback import axis_factors, describe_tensor


def _items(c, o):
    return {i["kind"]: i for i in describe_tensor(c, o, (c - o).abs() > 1e-9, {"max_err": 1.0})}


def test_a_per_column_scale_indexed_by_the_row_is_named():
    torch.manual_seed(0)
    y = torch.randn(6, 6, dtype=torch.float64)
    s = 0.5 + torch.rand(6, dtype=torch.float64)
    want, got = y * s[None, :], y * s[:, None]  # the reference scales columns; the candidate rows
    item = _items(got, want)["axis_factor"]
    assert item["data"]["axis"] == "both" and "wrong axis" in item["text"], item


def test_a_wrong_per_column_scale_is_named_as_one():
    torch.manual_seed(1)
    y = torch.randn(5, 7, dtype=torch.float64)
    s = 0.5 + torch.rand(7, dtype=torch.float64)
    item = _items(y * s * s, y * s)["axis_factor"]  # the scale applied twice
    assert item["data"]["axis"] == "column" and "7 entries" in item["text"], item


def test_no_axis_item_for_other_errors():
    torch.manual_seed(2)
    y = torch.randn(4, 8, dtype=torch.float64)
    assert axis_factors(y + 0.1, y) is None  # an offset
    assert axis_factors(y * 1.5, y) is None  # one factor everywhere (the constant_ratio item)
    row = 0.5 + torch.rand(4, 1, dtype=torch.float64)
    assert axis_factors(y * row, y) is None  # a per-row factor: _row_factor's sentence
    noisy = y * (1 + 0.05 * torch.randn(4, 8, dtype=torch.float64))
    assert axis_factors(noisy, y) is None
    assert "axis_factor" not in _items(y * row, y)


def test_a_per_row_offset_is_named():
    """log_softmax whose log-sum-exp counted padded lanes: expected minus one amount per row (queue round rt69)."""
    from kstrata.verify.feedback import values_item

    torch.manual_seed(3)
    x = torch.randn(4, 10, dtype=torch.float64)
    want = torch.log_softmax(x, -1)
    padded = torch.cat([x, torch.zeros(4, 6, dtype=torch.float64)], -1)  # 6 padded lanes of 0 in the sum
    got = x - torch.logsumexp(padded, -1, keepdim=True)
    text = values_item(got, want, (got - want).abs() > 1e-9)["text"]
    assert "off by one amount of that row" in text and "padded lanes" in text, text
    # one amount everywhere is the older sentence, not this one
    text = values_item(want - 0.5, want, torch.ones_like(want, dtype=torch.bool))["text"]
    assert "of that row" not in text, text
