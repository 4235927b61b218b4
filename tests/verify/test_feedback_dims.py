"""Located feedback names wrong elements by the output's own dimensions (red-team
2026-12-04: a reduction's wrong output index was called a "column")."""

from __future__ import annotations

import torch

from kstrata.verify.feedback import describe_tensor


def _where(c: torch.Tensor, o: torch.Tensor) -> dict:
    return next(i for i in describe_tensor(c, o, c != o, {"max_err": 1.0}) if i["kind"] == "rows_cols")


def test_a_vector_output_is_named_by_its_one_dim():
    o = torch.randn(17, dtype=torch.float64)
    c = o.clone()
    c[[3, 4, 9]] = 0
    item = _where(c, o)
    assert item["text"] == "wrong elements of the output (shape (17,)) at indices along dim 0 (size 17): 3-4, 9"
    assert item["data"]["dims"] == {"0": [3, 4, 9]}


def test_dims_of_size_one_are_left_out_and_every_other_named():
    o = torch.randn(8, 1, dtype=torch.float64)  # a row sum with keepdim
    c = o.clone()
    c[5] = 0
    assert "column" not in _where(c, o)["text"] and "dim 0 (size 8): 5" in _where(c, o)["text"]
    o = torch.randn(2, 3, 5, dtype=torch.float64)
    c = o.clone()
    c[1, 2, 4] = 0
    assert _where(c, o)["text"].endswith("dim 0 (size 2): 1; dim 1 (size 3): 2; dim 2 (size 5): 4")
