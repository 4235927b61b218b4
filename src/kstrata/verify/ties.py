"""Index outputs compared tie-aware: an argmax, argmin, topk or sort index
that differs from the reference's only where input values are equal is
correct.

PyTorch's ``argmax`` returns the first of several equal maxima; a parallel
reduction may return another, and both are correct. Where a task's inputs
have ties (the ``grid`` draw's 129 distinct values; any bfloat16 draw, whose
largest values of a 4096-long row tie a few percent of the time), an exact
comparison of indices rejected a correct kernel (red-team round 3, item 4:
KernelBench argmax files, which have no metadata, got the ``grid`` draw).

An integer output is read as indices along dimension ``d`` of a floating
input ``x`` of the same number of dimensions when its shape is ``x``'s with
``d`` removed (``argmax(x, d)``) or with ``d``'s size replaced by some
``k <= x.shape[d]`` (``keepdim``, ``topk``, ``sort``); it is tie-equivalent
to the reference's when every index is in range, the values it points at
equal those the reference's point at (NaN equal to NaN), and, where ``k > 1``,
the indices along ``d`` are distinct (a permutation when ``k`` is the full
size: ``sort``/``argsort``). An index into a tensor the forward computes
(a matmul then an argmax) cannot be checked this way: :func:`tie_prone_draw`
says which draws' integer outputs then decide nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import torch

#: Draws whose few distinct values make ties the rule (:mod:`kstrata.tasks.inputs`).
TIE_PRONE_DRAWS = ("grid", "ties")


def _gather_equal(x: torch.Tensor, d: int, a: torch.Tensor, b: torch.Tensor) -> bool:
    va, vb = x.gather(d, a), x.gather(d, b)
    return bool(((va == vb) | (torch.isnan(va) & torch.isnan(vb))).all())


def _distinct_along(idx: torch.Tensor, d: int) -> bool:
    if idx.shape[d] < 2:
        return True
    s = idx.sort(dim=d).values
    return bool((s.narrow(d, 1, s.shape[d] - 1) != s.narrow(d, 0, s.shape[d] - 1)).all())


def _readings(c: torch.Tensor, r: torch.Tensor, inputs: Sequence[Any]
              ) -> Iterator[tuple[torch.Tensor, int, torch.Tensor, torch.Tensor]]:
    """Each way some floating input ``x`` and dimension ``d`` read integer
    outputs ``c`` and ``r`` (int64, on the CPU) as indices: the shapes fit (an
    index per position of ``x`` without ``d``, or a slice of ``x`` along
    ``d``) and every index is in range. Yields ``(x on the CPU, d, c, r)``,
    ``c`` and ``r`` shaped to gather along ``d``."""
    for x in inputs:
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()) or x.dim() == 0:
            continue
        xc = x.detach().cpu()
        for d in range(xc.dim()):
            n = xc.shape[d]
            cc, rr = c, r
            if c.dim() == xc.dim() - 1 and tuple(c.shape) == tuple(xc.shape[:d] + xc.shape[d + 1:]):
                cc, rr = c.unsqueeze(d), r.unsqueeze(d)
            elif not (c.dim() == xc.dim() and c.shape[d] <= n
                      and all(c.shape[i] == xc.shape[i] for i in range(c.dim()) if i != d)):
                continue
            if cc.numel() == 0 or bool(((cc < 0) | (cc >= n)).any()) or bool(((rr < 0) | (rr >= n)).any()):
                continue
            yield xc, d, cc, rr


def index_readable(cand: torch.Tensor, ref: torch.Tensor, inputs: Sequence[Any]) -> bool:
    """Whether some floating input and dimension read both integer outputs as
    indices (:func:`_readings`, as :func:`tie_equivalent` reads them): then
    :func:`tie_equivalent` decides, and a tie-prone draw excuses nothing. An
    argmax that returned the argmin exactly on the grid draw (inputs that are
    multiples of 1/64, as 6-bit-quantized data are) read correct when that
    draw excused every integer output (red-team round of 2026-12-03). An
    index into an intermediate tensor of the same shape as an input is read
    this way too and decided by the input's values; that is the price of not
    excusing the grid draw wholesale."""
    if not (isinstance(cand, torch.Tensor) and isinstance(ref, torch.Tensor)) or cand.shape != ref.shape \
            or cand.is_floating_point() or ref.is_floating_point() or cand.dtype == torch.bool:
        return False
    return next(_readings(cand.detach().cpu().long(), ref.detach().cpu().long(), inputs), None) is not None


def tie_equivalent(cand: torch.Tensor, ref: torch.Tensor, inputs: Sequence[Any]) -> bool:
    """Whether integer output ``cand`` differs from the reference's ``ref``
    only by the choice among equal input values (module docstring).

    Parameters
    ----------
    cand, ref:
        The candidate's and the reference's integer outputs, same shape (any
        device; compared on the CPU).
    inputs:
        The test's inputs as the reference read them (non-tensors ignored).

    Returns
    -------
    bool
        True when some floating input and dimension read both outputs as
        indices and the values they select are equal; False otherwise
        (also for floating or differently shaped outputs).
    """
    if not (isinstance(cand, torch.Tensor) and isinstance(ref, torch.Tensor)) or cand.shape != ref.shape \
            or cand.is_floating_point() or ref.is_floating_point() or cand.dtype == torch.bool \
            or cand.dtype != ref.dtype:
        return False
    for xc, d, cc, rr in _readings(cand.detach().cpu().long(), ref.detach().cpu().long(), inputs):
        if _distinct_along(rr, d) and not _distinct_along(cc, d):
            continue  # the reference's indices are distinct (topk, sort): so must the candidate's be
        if _gather_equal(xc, d, cc, rr):
            return True
    return False


def tie_prone_draw(dist: str) -> bool:
    """Whether integer outputs computed from draw ``dist`` may differ from the
    reference's by a tie that :func:`tie_equivalent` cannot see (an index into
    an intermediate tensor, a rounding of an exact half): those outputs decide
    nothing on such a draw (the task's other draws decide them)."""
    return dist in TIE_PRONE_DRAWS
