"""Feedback hints that misled newcomer nc26 (tests/verify/cases/nc26_misleading_hints).

The row_groups item stays silent where the inputs' rows explain which rows are right: a softmax whose
running max started at 0.0 was wrong on every row the ``offset`` draw moved to -1000 and right on those
moved to +1000, alternately, and was told "row 0 of each group of 2 is right: a value taken once per tile
of 2 rows" of a kernel with one program per row. The input_sign item stays silent where most elements of
that sign are right."""

from __future__ import annotations

import torch

from kstrata.verify.row_groups import explained_by_inputs, row_groups_item


def _zero_max_softmax(x: torch.Tensor) -> torch.Tensor:
    """The case's bug in PyTorch: the row max starts at 0.0, so a row far below zero underflows to 0/0."""
    m = torch.clamp(x.max(dim=1, keepdim=True).values, min=0.0)
    e = torch.exp(x - m)
    return e / e.sum(dim=1, keepdim=True)


def _judge(c: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
    return ~torch.isclose(c, o, rtol=1e-5, atol=1e-8) | torch.isnan(c)


def test_an_offset_draw_alternating_by_row_is_not_told_as_a_tile_of_rows():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 77, generator=g, dtype=torch.float64)
    x += torch.tensor([-1000.0, 1000.0] * 4, dtype=torch.float64)[:, None]  # the offset draw's alternation
    c, o = _zero_max_softmax(x), torch.softmax(x, dim=1)
    bad = _judge(c, o)
    assert bad.any(1).tolist() == [True, False] * 4  # the pattern the item keys on
    assert row_groups_item(c, o, bad) is not None  # without the inputs it reads as a tile of 2 rows
    assert row_groups_item(c, o, bad, [x]) is None


def test_a_tile_that_shares_one_rows_value_is_still_named_on_random_rows():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 64, generator=g, dtype=torch.float64)
    o = torch.softmax(x, dim=1)
    m = x.max(dim=1, keepdim=True).values
    shared = m.reshape(8, 2, 1)[:, :1].expand(8, 2, 1).reshape(16, 1)  # each tile of 2 rows uses its first row's max
    e = torch.exp(x - shared)
    c = e / torch.exp(x - m).sum(dim=1, keepdim=True)  # normalised with each row's own sum: off by exp(m - shared)
    bad = _judge(c, o)
    item = row_groups_item(c, o, bad, [x])
    assert item is not None and item["data"]["group"] == 2 and item["data"]["right"][:3] == [0, 2, 4]
    assert not explained_by_inputs([not b for b in bad.any(1).tolist()], [x])


def test_wrong_elements_at_one_sign_are_named_only_where_most_of_that_sign_is_wrong():
    """nc26's second hint: a wrong per-row normalizer (a softmax sum missing its last partial chunk) put its
    wrong elements where the input is positive (the larger outputs cross atol first) with most positive
    elements right; a branch for negative inputs (nc14's GELU) puts most of them wrong."""
    from kstrata.verify.feedback import sign_hint

    g = torch.Generator().manual_seed(2)
    x = torch.randn(64, 256, generator=g, dtype=torch.float64)
    top = x > torch.quantile(x, 0.85)  # the largest outputs only, all at positive inputs
    assert bool((x[top] > 0).all()) and int(top.sum()) < int((x > 0).sum()) // 2
    assert sign_hint([x], top) is None
    branch = x < -0.1  # a formula wrong for negative inputs, small ones within tolerance
    hint = sign_hint([x], branch)
    assert hint is not None and hint["data"]["sign"] == "negative"
