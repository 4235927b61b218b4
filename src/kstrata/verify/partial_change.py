"""A partial in-place change of one input, for the ``no_caching`` check.

The judge's checked calls put each input into the same buffer call after call
(:meth:`kstrata.sandbox.child.Child._same_address`), and consecutive tests rewrite
the whole buffer. A result cache keyed on the buffer's address, its shape and one or
a few sampled elements (the last one, the corners and the centre) then misses on every
new test, since the sampled elements change too, and returns a stale output when only
other elements change, as when a caller updates a tensor in place (newcomer nc20: max
error 0.44 after rows 0-19 of an L2 norm's input changed in place, ``correct`` before).

:func:`changed_in_place` gives the inputs of a test with a few interior elements of one
input changed, the rest bit-identical: sent as the next call's inputs, they land in the
same buffer (same ``data_ptr``), and the output must follow the new values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

#: the fewest and the most elements changed (about one in :data:`CHANGE_EVERY` between them)
CHANGE_MIN, CHANGE_MAX = 4, 64
CHANGE_EVERY = 1024
#: the smallest input (elements) changed: a smaller one has no interior worth the name
CHANGE_MIN_NUMEL = 16


def changed_in_place(inputs: Sequence[Any], seed: int, only: Sequence[int] | None = None
                     ) -> tuple[list[Any], int, int] | None:
    """``inputs`` with a few interior elements of one floating input changed, or None.

    Parameters
    ----------
    inputs:
        One test's inputs (CPU tensors and other values), as drawn; not modified.
    seed:
        Seed of the choices (a hidden test's seed: derived from the run's secret).
    only:
        Indices the task's distributions apply to (``TaskMeta.dist_inputs``); None: every
        floating input.

    Returns
    -------
    (new inputs, input index, elements changed) or None
        The input is drawn from ``seed`` among the finite floating tensors of at least
        :data:`CHANGE_MIN_NUMEL` elements; the elements (``clamp(numel // CHANGE_EVERY,
        CHANGE_MIN, CHANGE_MAX)``) are at seeded positions whose index is neither the
        first nor the last along any dimension longer than 2, and not the centre; each gets
        ``mean + std * z`` (the tensor's own mean and standard deviation in float64, ``z``
        standard normal; std 1 for a constant tensor), rounded to its dtype. The new tensor
        is a copy with the input's strides (``clone``). None when no input qualifies or no value changed.
    """
    gen = torch.Generator().manual_seed(seed * 104_729 + 7)
    fit = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.is_floating_point()
           and x.numel() >= CHANGE_MIN_NUMEL and (only is None or i in only) and bool(torch.isfinite(x).all())]
    if not fit:
        return None
    i = fit[int(torch.randint(0, len(fit), (), generator=gen, device="cpu"))]
    x = inputs[i]
    k = min(CHANGE_MAX, max(CHANGE_MIN, x.numel() // CHANGE_EVERY))
    idx = []
    for n in x.shape:  # interior along every dimension that has one
        lo, hi = (1, n - 1) if n > 2 else (0, n)
        idx.append(torch.randint(lo, hi, (k,), generator=gen, device="cpu"))
    at = torch.stack(idx, 1) if idx else torch.zeros(k, 0, dtype=torch.long, device="cpu")
    centre = torch.tensor([n // 2 for n in x.shape], device="cpu")
    at = at[~(at == centre).all(1)]
    if not len(at):
        return None
    d = x.double()
    mean, std = float(d.mean()), float(d.std())
    values = torch.randn(len(at), generator=gen, dtype=torch.float64, device="cpu").mul_(std or 1.0).add_(mean) \
        .to(x.device, x.dtype)
    new = x.clone()  # the input's strides (contiguous for an expanded view, whose elements share memory)
    new[tuple(at.t().to(x.device))] = values
    if torch.equal(new, x):
        return None
    out = list(inputs)
    out[i] = new
    return out, i, int((new != x).sum())
