"""The ``ties`` draw (constant rows and reductions, ties at the maximum; a default) and the
``outliers`` draw (values far outside any integer range; every quantization task's), red-team
2026-12-04: a softmax wrong on constant rows and an int16-before-clamp quantize read correct."""

from __future__ import annotations

from pathlib import Path

import torch

from kstrata.tasks.inputs import OUTLIERS_EVERY, TIES_EVERY, apply_distribution
from kstrata.tasks.loader import inferred_metadata
from kstrata.tasks.meta import DEFAULT_DISTRIBUTIONS, TaskMeta


def _constant_along(x: torch.Tensor, d: int) -> torch.Tensor:
    return (x == x.select(d, 0).unsqueeze(d)).all(dim=d)


def test_ties_makes_fibres_along_every_dim_constant_at_the_maximum():
    torch.manual_seed(0)
    for shape in [(8, 512), (5, 77), (3, 6, 9), (2, 3, 4, 5), (1, 7), (7, 1)]:
        for seed in range(3):
            (y,) = apply_distribution([torch.randn(shape)], "ties", seed)
            c = float(y.max())
            assert c >= 1 and c == 2.0 ** round(torch.log2(torch.tensor(c)).item())  # a power of two: exact sums
            for d in range(y.dim()):
                if y.shape[d] > 1:
                    const = _constant_along(y, d)
                    assert bool(const.any()), (shape, seed, d)  # some whole reductions along d are constant
                    assert bool((y.amax(dim=d)[const] == c).all())  # and equal to the maximum
            if y.dim() == 2 and min(y.shape) > TIES_EVERY:
                ties_at_max = (y == c).sum(dim=-1)
                assert bool((ties_at_max >= y.shape[-1] // TIES_EVERY).all())  # every row ties at its max


def test_ties_on_a_vector_alternates_constant_and_tied():
    x = torch.randn(33)
    (even,) = apply_distribution([x], "ties", 4)
    (odd,) = apply_distribution([x], "ties", 5)
    assert bool((even == even[0]).all())
    assert int((odd == odd.max()).sum()) >= 33 // TIES_EVERY and not bool((odd == odd[0]).all())


def test_ties_is_a_default_draw():
    assert "ties" in DEFAULT_DISTRIBUTIONS and "ties" in TaskMeta().distributions


def test_outliers_reach_far_outside_any_integer_range_within_the_dtype():
    torch.manual_seed(0)
    x = torch.randn(64, 128)
    (y,) = apply_distribution([x], "outliers", 3)
    big = y.abs() >= 10
    assert OUTLIERS_EVERY // 2 <= y.numel() // int(big.sum()) <= OUTLIERS_EVERY * 2
    assert float(y.abs().max()) > 1e7 and bool(((y > 645) & big).any()) and bool(((y < -645) & big).any())
    (h,) = apply_distribution([x.half()], "outliers", 3)
    assert bool(torch.isfinite(h).all()) and float(h.abs().max()) >= 1000  # capped below fp16's max
    (s,) = apply_distribution([torch.tensor([0.02])], "outliers", 3)
    assert s.item() == torch.tensor([0.02]).item()  # a one-element tensor (a scale) is left alone


def test_every_quantization_task_gets_the_outliers_draw():
    listed = TaskMeta(category="quant", distributions=("normal", "uniform"))
    assert listed.distributions == ("normal", "uniform", "outliers", "positive", "shifted")
    assert "outliers" in TaskMeta(category="elementwise", tags=("quantize",)).distributions
    assert "outliers" not in TaskMeta(category="quant", dist_inputs=()).distributions  # integer inputs only
    assert "outliers" not in TaskMeta(category="softmax").distributions
    again = TaskMeta.model_validate(listed.model_dump(mode="json"))  # as the candidate process rebuilds it
    assert again.distributions == listed.distributions


def test_a_plain_file_that_quantizes_is_tagged_so():
    src = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x, s):\n"
           "        return torch.round(x / s).clamp(-128, 127).to(torch.int8)\n")
    raw = inferred_metadata(Path("level1/q.py"), src, {})
    assert "quantize" in raw["tags"] and "outliers" in TaskMeta(**raw).distributions
    plain = src.replace(".to(torch.int8)", "").replace("torch.round", "torch.tanh")
    assert "quantize" not in inferred_metadata(Path("level1/t.py"), plain, {})["tags"]
