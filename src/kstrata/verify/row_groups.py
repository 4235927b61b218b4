"""The ``row_groups`` feedback item: one right row in every group of P
consecutive rows, the other rows of the group wrong.

A kernel that processes a tile of P rows per program and takes a value each row
needs for itself (a quantization scale, a row's max, sum or norm) once for the
whole tile makes exactly this pattern: the row whose own value the tile used is
right, the others are wrong. Queue round rt75: a [4, BLOCK_K] Triton tile that
loaded ``scale[row0]`` for its four rows (quantize_per_channel) was told rows
"1-3, 5-7, 9-11, ..." were wrong, the regularity left to the reader; round rt72:
a per-token fake quantization whose absmax ran over the whole tile
(``tl.max`` without ``axis``) read right only on the rows holding their tile's
maximum (rows 1 and 5 of 8), with no item naming it (the rounding to the
integer grid breaks :func:`kstrata.verify.feedback.axis_factors`' exact
ratios)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

#: the largest group of rows (a tile's height) tried
MAX_GROUP = 64
#: the fewest groups, and right rows, that make a pattern
MIN_GROUPS = 2
#: how far from 1 a row's factor must be for :func:`_factors` to name it
FACTOR_OFF = 0.02


def _group(right: list[bool]) -> int | None:
    """The smallest P (2 to :data:`MAX_GROUP`, at least :data:`MIN_GROUPS`
    groups) such that every group of P consecutive rows (the last one may be
    shorter) holds exactly one right row; None if none does."""
    n = len(right)
    for p in range(2, min(MAX_GROUP, n // MIN_GROUPS) + 1):
        if all(sum(right[g:g + p]) == 1 for g in range(0, n, p)):
            return p
    return None


def _factors(c: torch.Tensor, o: torch.Tensor, rows: list[int]) -> str:
    """``"; the wrong rows' codes are ... (row 1: about x0.828, ...)"``: for
    integer-valued outputs (quantization codes), per wrong row (the first 3),
    the median f of candidate / expected over its elements with |expected| >= 4
    where neither is at the outputs' extremes (a clamp), when every such element
    is within rounding of f times its expected code (|c - f o| <= 0.5 + 0.5 |f|:
    each side rounded once) and f is not 1; ``""`` otherwise (a dequantized
    float output stays within a step of its expected value: no factor; an
    exact float factor is :func:`kstrata.verify.feedback._row_factor`'s)."""
    if not bool((c == c.round()).all() and (o == o.round()).all()):
        return ""
    lo, hi = float(torch.minimum(c.min(), o.min())), float(torch.maximum(c.max(), o.max()))
    shown = []
    for r in rows[:3]:
        keep = (o[r].abs() >= 4) & (c[r] > lo) & (c[r] < hi) & (o[r] > lo) & (o[r] < hi)
        if int(keep.sum()) < 4:
            return ""
        got, want = c[r][keep], o[r][keep]
        f = float((got / want).median())
        if float((got - f * want).abs().max()) > 0.5 + 0.5 * abs(f) + 1e-9 or abs(f - 1) <= FACTOR_OFF:
            return ""
        shown.append(f"row {r}: about x{f:.3g}")
    return ("; the wrong rows' codes are their expected codes times about one factor of their row, up to "
            f"rounding ({', '.join(shown)}): each row was divided by another row's scale")


def explained_by_inputs(right: list[bool], inputs: Sequence[Any]) -> bool:
    """Whether a floating input with one row per output row (its elements split evenly over the
    output's rows) separates the right rows from the wrong ones by its row means alone (every right
    row's mean above every wrong row's, or below): the pattern then follows the data, not a tile.
    Newcomer nc26: a softmax whose max started at 0.0 was wrong on every row the ``offset`` draw moved
    to -1000 and right on those moved to +1000, alternately, and read as "row 0 of each group of 2
    right: a value taken once per tile of 2 rows" from a kernel with one program per row
    (tests/verify/cases/nc26_misleading_hints). Needs 4 or more rows (by chance, a tile bug's random
    rows separate with probability 2 / C(n, n/P): 1/35 at 8 rows in groups of 2)."""
    n = len(right)
    if n < 4 or all(right) or not any(right):
        return False
    for x in inputs:
        if not (isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 2 and x.numel()):
            continue
        if math.prod(x.shape[:-1]) != n:  # one input row per output row
            continue
        means = torch.nan_to_num(x.detach().double().reshape(n, -1).mean(dim=1)).tolist()
        ok = [m for m, r in zip(means, right) if r]
        bad = [m for m, r in zip(means, right) if not r]
        if min(ok) > max(bad) or max(ok) < min(bad):
            return True
    return False


def row_groups_item(c: torch.Tensor, o: torch.Tensor, bad: torch.Tensor,
                    inputs: Sequence[Any] = ()) -> dict[str, Any] | None:
    """The ``row_groups`` item (level ``source``) for one output, or None.

    Parameters
    ----------
    c, o : torch.Tensor
        The candidate's output and the oracle, float64, of one shape with 2 or
        more dimensions (rows: every index but the last, flattened).
    bad : torch.Tensor
        bool, that shape: the wrong elements.
    inputs : sequence
        The test's inputs, where known: None when one of them explains the
        pattern (:func:`explained_by_inputs`).

    Returns
    -------
    dict or None
        ``{"kind": "row_groups", "level": "source", "text": ..., "data":
        {"group": P, "right": [...]}}`` when every group of P consecutive rows
        holds exactly one right row (:func:`_group`; at least 2 right rows),
        else None.
    """
    if bad.dim() < 2 or bad.shape[-1] < 1 or not tuple(c.shape) == tuple(bad.shape) == tuple(o.shape):
        return None
    n_cols = bad.shape[-1]
    wrong = bad.reshape(-1, n_cols).any(dim=1).tolist()
    right = [not w for w in wrong]
    p = _group(right)
    if p is None or sum(right) < MIN_GROUPS or explained_by_inputs(right, inputs):
        return None
    at = [i for i, ok in enumerate(right) if ok]
    offsets = {i % p for i in at}
    shown = ", ".join(map(str, at[:4])) + (", ..." if len(at) > 4 else "")
    groups = f"{len(range(0, len(right), p))} groups: rows 0-{p - 1}, {p}-{2 * p - 1}, ..."
    whole = (f"computed over the whole tile of {p} rows (a tl.max / tl.sum without axis=1), so it fits only the "
             "row that holds the tile's extreme")
    if len(offsets) == 1 and at[0] == 0 and len(at) >= 3:
        which = f"row 0 of each group (rows {shown}) is right"
        cause = (f"a value each row needs for itself (a scale, max, sum or norm) taken once per tile of {p} rows "
                 f"and used for all its rows (loaded at the tile's first row, e.g. `scale[pid * {p}]` where "
                 "the reference has one per row)?")
    else:
        where = f"row {at[0] % p} of each group" if len(offsets) == 1 else "a different one in each group"
        which = f"one row of each group is right, {where} (rows {shown})"
        cause = (f"a value each row needs for itself (a scale, max, sum or norm) taken once per tile of {p} rows: "
                 f"{whole}, or loaded at one row of the tile?")
    flat_c, flat_o = c.reshape(-1, n_cols), o.reshape(-1, n_cols)
    factors = _factors(flat_c, flat_o, [i for i, w in enumerate(wrong) if w])
    text = (f"in every group of {p} consecutive rows ({groups}) exactly one row is right and the others are "
            f"wrong: {which}{factors}: {cause}")
    return {"kind": "row_groups", "level": "source", "text": text, "data": {"group": p, "right": at[:64]}}
