"""The values item says when every wrong element errs in one direction by
differing amounts (queue round rt72: a per-row cross-entropy loss all too low
after a tail mask dropped each row's last class, all too high with padded
lanes counted; the sign had to be read off the values)."""

from __future__ import annotations

import torch

from kstrata.verify.feedback import values_item


def _values(got, want):
    c, o = torch.tensor(got, dtype=torch.float64), torch.tensor(want, dtype=torch.float64)
    return values_item(c, o, torch.ones_like(c, dtype=torch.bool))["text"]


def test_a_loss_too_low_on_every_row_is_named_one_sided():
    # rt72 P2.3's values: 5.46589 -> 5.46007; 4.28817 -> 4.28004; ... (a term missing from each row's sum)
    text = _values([5.46007, 4.28004, 4.29594, 5.53275, 4.43624], [5.46589, 4.28817, 4.30462, 5.61571, 4.47014])
    assert "every wrong element is below its expected value (5 of 5" in text


def test_too_high_everywhere_is_above_and_mixed_signs_say_nothing():
    assert "above its expected value" in _values([5.85, 4.60, 4.57], [5.47, 4.29, 4.30])
    mixed = _values([5.85, 4.20, 4.57], [5.47, 4.29, 4.30])
    assert "its expected value" not in mixed
    assert "its expected value" not in _values([5.85, 4.60], [5.47, 4.29])  # two elements tell no pattern
    # one amount everywhere keeps its own, more precise wording
    assert "off by about" in _values([1.5, 2.5, 3.5], [1.0, 2.0, 3.0]) or "off by +0.5" in \
        _values([1.5, 2.5, 3.5], [1.0, 2.0, 3.0])
