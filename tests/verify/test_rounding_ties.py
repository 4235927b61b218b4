"""Integer outputs of a quantization, one step allowed at a rounding tie and nowhere else
(:mod:`kstrata.verify.rounding`; red-team 2026-12-04: an honest ``x * (1/s)`` read incorrect)."""

from __future__ import annotations

import torch

from kstrata.tasks.meta import Tolerance
from kstrata.verify.rounding import rounding_sides, within_a_tie
from kstrata.verify.tolerance import compare

SCALE = torch.tensor([2.5 / 127])


def _quantize(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    return torch.round(x / s).clamp(-128, 127).to(torch.int8)


def _sides(x: torch.Tensor):
    x64, s64 = x.double(), SCALE.double()
    return rounding_sides(lambda: [_quantize(x64, s64)], torch.float32)


def test_a_reciprocal_multiply_differs_only_at_ties_and_is_allowed():
    torch.manual_seed(0)
    x = torch.randn(1 << 20) * 3
    ref = _quantize(x, SCALE)
    cand = torch.round(x * (1 / SCALE)).clamp(-128, 127).to(torch.int8)
    assert int((cand != ref).sum()) > 0  # the case: the reciprocal lands on the other side of some ties
    down, up, near = _sides(x)
    assert 0 < near < x.numel() // 1000
    assert bool(within_a_tie(cand, ref, down[0], up[0]).all())
    # compare() alone is exact for integers, and says which policy it applies
    c = compare(cand, ref, ref, Tolerance(kind="quant"))
    assert not c.ok and c.stats["policy"] == "quant" and c.stats["integer"]


def test_a_step_away_from_any_tie_is_not_allowed():
    torch.manual_seed(1)
    x = torch.randn(1 << 16) * 3
    ref = _quantize(x, SCALE)
    down, up, _ = _sides(x)
    off = torch.floor(x / SCALE + 0.51).clamp(-128, 127).to(torch.int8)  # one step off near, not at, ties
    assert not bool(within_a_tie(off, ref, down[0], up[0]).all())
    two = ref.clone()
    two[0] = ref[0] + 2 if ref[0] < 120 else ref[0] - 2
    assert not bool(within_a_tie(two, ref, down[0], up[0])[0])


def test_no_rounding_near_a_tie_gives_no_allowance():
    x = torch.tensor([0.1, 0.2, 0.3]) * SCALE  # quotients 0.1, 0.2, 0.3: no tie within rounding
    assert _sides(x) is None
