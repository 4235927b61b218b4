"""Name a constant scale hidden under a per-column additive term.

A kernel that computes ``y = s * f(x) + b[j]`` with the right ``b`` and a
wrong constant ``s`` (a LayerNorm's variance over ``n - 1`` instead of ``n``,
a normalizer off by a padded count) has no constant ``output / expected``
ratio: the bias ``b[j]`` is right, so the ratio varies with every element and
the ``constant_ratio`` item stays silent. Centred on each column (the mean
over the rows subtracted), the bias cancels and ``y - mean(y)`` is ``s / s0``
times the expected ``o - mean(o)``. Newcomer nc27 (k8): a LayerNorm with
torch.var's unbiased variance read "3961 of 4096 elements wrong" and the
values, with no hint of ``sqrt(511/512)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from kstrata.verify.size_ratio import MATCH_REL, size_ratio_hint

#: centred expected values smaller than this share of the largest are not read (their ratio is noise)
MIN_SHARE = 0.1
#: the centred ratios must agree within this share of their distance from 1 to count as one scale
SAME_SHARE = 0.05


def offset_ratio_item(c: torch.Tensor, o: torch.Tensor, sizes: Iterable[int]) -> dict[str, Any] | None:
    """An ``offset_ratio`` feedback item when the candidate's output ``c`` and
    the expected ``o`` (same shape, 2 or more dimensions, every element finite;
    rows are all but the last dimension, at least 2 of them), each centred on
    its columns, differ by one factor ``r != 1`` everywhere (within
    :data:`SAME_SHARE` of ``|r - 1|``, read where the centred expected value is
    at least :data:`MIN_SHARE` of its largest) while ``c / o`` itself is not
    constant; the text names ``r`` as a ratio of ``sizes`` (the test's
    dimensions) where :func:`kstrata.verify.size_ratio.size_ratio_hint` finds
    one. ``None`` otherwise."""
    from kstrata.verify.feedback import item

    if c.dim() < 2 or c.shape != o.shape or c.shape[-1] < 2:
        return None
    n = c.shape[-1]
    got, want = c.reshape(-1, n).double(), o.reshape(-1, n).double()
    if got.shape[0] < 2 or not bool((torch.isfinite(got) & torch.isfinite(want)).all()):
        return None
    gc, wc = got - got.mean(0, keepdim=True), want - want.mean(0, keepdim=True)
    big = wc.abs() >= MIN_SHARE * float(wc.abs().max())
    if int(big.sum()) < 4 or float(wc.abs().max()) == 0.0:
        return None
    ratio = gc[big] / wc[big]
    r = float(ratio.median())
    spread = float((ratio - r).abs().max())
    if not (r > 0 and abs(r - 1) > 1e-6 and spread <= SAME_SHARE * abs(r - 1)):
        return None
    raw = got[want != 0] / want[want != 0]
    if raw.numel() and float((raw - r).abs().max()) <= SAME_SHARE * abs(r - 1):
        return None  # a plain constant ratio: the constant_ratio item says it
    hint = size_ratio_hint(r, sizes) if spread <= MATCH_REL * r else ""
    return item("offset_ratio", "source",
                f"output = {r:.6g} x expected plus one offset per column (the same in every row){hint}: the "
                "values are scaled by a wrong constant before a per-column term is added (a bias, a shift), "
                "so the term is right and the scale before it is not", ratio=r)
