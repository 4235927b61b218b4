"""Which way the rows a test's ``offset`` or ``far`` draw moved were wrong.

Both draws move whole rows (last-dimension fibres) of an input: ``offset`` by
+1000 on even rows and -1000 on odd ones, ``far`` by -10^e on even seeds and
+10^e on odd ones (:mod:`kstrata.tasks.inputs`). A kernel's padding or start
value fails one direction only: a max padded with 0 on all-negative rows, a
min started at 0 on all-positive ones. Queue round rt78: a cross_entropy
padded with 0.0 was told "fails for inputs drawn offset, far" and which rows
were wrong (1 and 3), not that those were the rows moved down by 1000.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch



#: a row whose mean is beyond this (in absolute value) counts as moved by the draw
MOVED = 100.0
#: what tends to go wrong on rows of one sign, by direction
_WHY = {
    "down": "all-negative rows: a padding or start value of 0 (or another finite sentinel above the values) "
            "wins a max, an exp against it underflows to 0, a log of that 0 is -inf",
    "up": "all-positive rows: a padding or start value of 0 (or another finite sentinel below the values) wins "
          "a min, or an exp of the values without the row's max subtracted overflows",
}


def _wrong_rows(bad: torch.Tensor, x: torch.Tensor) -> torch.Tensor | None:
    """The mask of ``x``'s rows that hold a wrong output: ``bad`` has ``x``'s
    shape (one output per element) or one element per row of ``x``."""
    n_rows = x.numel() // max(x.shape[-1], 1) if x.dim() > 1 else 1
    if tuple(bad.shape) == tuple(x.shape):
        return bad.reshape(n_rows, -1).any(1)
    if x.dim() > 1 and bad.numel() == n_rows:
        return bad.reshape(-1)
    return None


def _size(lo: float, hi: float, sign: str) -> str:
    """``about -1000`` or ``-5.11e+04 to -2.14e+22``: how far the rows moved."""
    return f"about {sign}{float(f'{lo:.2g}'):g}" if hi < 10 * lo else f"{sign}{lo:.3g} to {sign}{hi:.3g}"


def _rows_text(idx: list[int]) -> str:
    shown = ", ".join(map(str, idx[:6]))
    return shown + (", ..." if len(idx) > 6 else "")


def direction_item(dist: str, inputs: Sequence[Any], bad: torch.Tensor) -> dict | None:
    """A ``draw_direction`` item for a failing test drawn ``offset`` or
    ``far``: the wrong rows read against the sign of their input row's mean
    (moved up or down), from the first floating input whose rows the output's
    wrong-element mask ``bad`` maps onto (same shape, or one output per row).
    ``None`` for other draws, when no input maps, when its rows were not moved
    beyond :data:`MOVED`, or when no row is wrong."""
    from kstrata.verify.feedback import item

    if dist not in ("offset", "far") or not bool(bad.any()):
        return None
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() == 0:
            continue
        wrong = _wrong_rows(bad.cpu(), x)
        if wrong is None:
            continue
        rows = x.detach().cpu().double().reshape(wrong.numel(), -1)
        mean = torch.nan_to_num(rows, nan=0.0, posinf=0.0, neginf=0.0).mean(1)
        up, down = mean > MOVED, mean < -MOVED
        if not bool((up | down).all()):
            continue
        wu, wd = int((wrong & up).sum()), int((wrong & down).sum())
        nu, nd = int(up.sum()), int(down.sum())
        lo, hi = float(mean.abs().min()), float(mean.abs().max())
        where = f"input {i}'s rows"
        if wu and wd:
            text = (f"on this {dist} draw rows moved either way are wrong ({wu} of {nu} moved up, {wd} of {nd} "
                    f"moved down, by {_size(lo, hi, '+-')}): the size of the values, not their sign, breaks the kernel "
                    "(a one-pass variance or a sum that cancels, an exp or square that overflows)")
        else:
            way, other, n_other = ("down", "up", nu) if wd else ("up", "down", nd)
            wrong_idx = wrong.nonzero().flatten().tolist()
            right = (f"; the {n_other} row(s) moved {other} are right" if n_other else
                     f" (this draw moved every row {way}; other seeds move them {other})")
            text = (f"on this {dist} draw every wrong row is one that the draw moved {way} ({where} "
                    f"{_rows_text(wrong_idx)}: moved by {_size(lo, hi, '-' if way == 'down' else '+')}){right}: "
                    f"{_WHY[way]}")
        return item("draw_direction", "source", text, draw=dist, input=i, wrong_up=wu, wrong_down=wd,
                    moved_up=nu, moved_down=nd)
    return None
