"""Feedback for wrong elements that sit at a position an integer input sets
(newcomer nc25: a masked softmax whose mask keeps column ``j == lengths[b]``
too, ``<=`` for ``<``, read "47% wrong" with nothing pointing at the mask's
bound: the whole row is renormalized, so every element of it is wrong, but
the largest error of each wrong row is at column ``lengths[b]``).
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

#: The share of the wrong rows whose largest error must sit at the input's value (plus the offset).
SHARE = 0.9
#: The fewest wrong rows that make a pattern.
MIN_ROWS = 2


def _names(model: Any, n: int) -> list[str]:
    """How the item names each of ``n`` inputs' value in a row: the reference
    ``forward``'s parameter name (``lengths[row] (input 1)``) or ``input i[row]``."""
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [f"{params[i]}[row] (input {i})" if i < len(params) else f"input {i}[row]" for i in range(n)]


def index_hint(model: Any, inputs: list[Any], out: torch.Tensor, oracle: torch.Tensor, bad: torch.Tensor
               ) -> dict[str, Any] | None:
    """An ``index_bound`` feedback item, or None.

    Parameters
    ----------
    model:
        The task's reference (its ``forward``'s parameter names name the input).
    inputs:
        The failing test's inputs (CPU), as drawn.
    out, oracle:
        One output of the candidate and its oracle, same shape ``(*lead, D)``.
    bad:
        Boolean, ``out``'s shape: the elements outside tolerance.

    Returns
    -------
    dict or None
        Where an integer input ``L`` of shape ``lead`` has, in at least
        :data:`SHARE` of the wrong rows (at least :data:`MIN_ROWS`), the row's
        largest error at last-dim index ``L[row] + k`` for one ``k`` in -1, 0,
        1: the item names the input and the offset (a bound or mask set by
        that input, off by one).
    """
    if out.ndim < 2 or out.shape != oracle.shape or bad.shape != out.shape or not bad.any():
        return None
    out, oracle, bad = out.cpu(), oracle.cpu(), bad.cpu()
    lead, d = out.shape[:-1], out.shape[-1]
    rows = bad.reshape(-1, d).any(-1)
    if int(rows.sum()) < MIN_ROWS:
        return None
    err = (out.double() - oracle.double()).abs().nan_to_num(nan=float("inf")).reshape(-1, d)
    where = err.argmax(-1)[rows]
    names = _names(model, len(inputs))
    for i, x in enumerate(inputs):
        if not (isinstance(x, torch.Tensor) and not x.is_floating_point() and not x.is_complex()
                and x.dtype != torch.bool and tuple(x.shape) == tuple(lead)):
            continue
        values = x.reshape(-1).long()[rows]
        for k in (0, 1, -1):
            hits = int((where == values + k).sum())
            if hits >= SHARE * len(where):
                at = "" if k == 0 else (" + 1" if k > 0 else " - 1")
                return {"kind": "index_bound", "level": "source", "data": {"input": i, "offset": k, "rows": hits},
                        "text": f"in {hits} of {len(where)} wrong rows the largest error sits at last-dim index "
                                f"{names[i]}{at}: the integer input's value sets where the error is, so look "
                                "at the bound or mask it gives (an off-by-one: < for <=, a length used as the "
                                "last index)"}
    return None
