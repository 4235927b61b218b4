"""The rounding error of a long sum in the orders a kernel really uses (red-team rt70).

:mod:`kstrata.verify.tolerance_reduction` allows a reordered sum of ``n`` terms
``lambda * sqrt(n) * u * sum|x_i|`` (Higham & Mary's probabilistic bound,
every partial sum bounded by ``sum|x_i|``). Where the terms cancel (a row sum
or mean of centred data) the partial sums are far smaller than ``sum|x_i|``:
at ``n = 65537`` normal terms that allowance is 9.5 per output, while a
float32 sum in any usual order errs by 0.003. A row sum that never added its
middle element (and summed honestly on the ``grid`` draw, where every order is
exact and which a kernel can recognise) read correct over 284 tests (case
``tests/verify/cases/rt70_sum_drops_a_term``).

:func:`ordered_sum_bound` bounds the error of the orders a kernel uses,
computed on the operand itself: for each order (left to right; ``L``
interleaved lanes summed left to right then added pairwise; contiguous chunks
summed left to right then added left to right; a pairwise tree) the sum is
carried out in the accumulation dtype, and the order's bound is the larger of

- its actual error against the float64 sum (which includes any systematic
  drift: nearly equal terms rounding the same way), and
- ``lambda * u * sqrt(sum_v v^2)`` over every value ``v`` it rounds (the
  terms themselves, when they are not exact in that dtype, and each partial
  sum): the first-order error of a sum is ``sum_v delta_v v`` with
  ``|delta_v| <= u``, and Higham & Mary's argument (SIAM J. Sci. Comput. 41(5),
  2019, Thm. 3.1) on independent mean-zero ``delta_v`` gives this with
  probability at least ``1 - 2 exp(-lambda^2 / 2)``.

The largest over the orders, times :data:`ORDER_MARGIN` for orders not
simulated, replaces the ``sqrt(n) * sum|x_i|`` allowance where it is smaller.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

#: Interleaved lane counts simulated (a SIMD or a GPU block's threads each summing every L-th term).
#: Few orders: each pass costs ~0.1 s at 4096 x 4096 on this project's CPU, and the left-to-right order
#: is the one that errs most on every draw tried (the margin covers the others).
LANES = (32,)
#: Contiguous chunk lengths simulated (a block per chunk, its totals added after).
CHUNKS = (1024,)
#: Factor over the largest simulated order's bound, for orders not simulated (trees of other
#: shapes, other lane counts, fused multiply-adds on the terms).
ORDER_MARGIN = 4.0
#: Accumulation dtypes simulated, by unit roundoff (numpy's float32 cumsum accumulates in
#: float32; torch's CPU cumsum accumulates float32 in float64 and cannot stand for it).
_SIMULATED = {2.0 ** -24: np.float32}


def _rows(x: torch.Tensor, dims: Any) -> tuple[torch.Tensor, list[int]]:
    """``x`` as a 2-D float64 tensor ``(outputs, n)``: the summed dims last (row-major), and the
    kept dims' sizes."""
    nd = x.dim()
    red = sorted({int(d) % nd for d in dims}) if dims else list(range(nd))
    keep = [d for d in range(nd) if d not in red]
    rows = x.permute(*keep, *red).reshape(math.prod(int(x.shape[d]) for d in keep), -1)
    return rows, [int(x.shape[d]) for d in keep]


def _pad(a: np.ndarray, m: int) -> np.ndarray:
    n = a.shape[1]
    extra = (-n) % m
    return np.concatenate([a, np.zeros((a.shape[0], extra), a.dtype)], axis=1) if extra else a


def _sq(a: np.ndarray) -> np.ndarray:
    """Sum of squares over every axis but the first, in float64: ``(rows,)``. einsum
    widens each element as it goes (no float64 copy of ``a``: a partial-sum array is
    as large as the operand, 64 MB at 4096 x 4096 float32)."""
    axes = "ijklmnop"[:a.ndim]
    return np.einsum(f"{axes},{axes}->i", a, a, dtype=np.float64)


def _pairwise(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise tree over axis 1 in ``a``'s dtype: (totals, sum of the nodes' squares)."""
    sq = np.zeros(a.shape[0])
    while a.shape[1] > 1:
        a = _pad(a, 2)
        a = a[:, 0::2] + a[:, 1::2]
        sq += _sq(a)
    return a[:, 0], sq


def _orders(t: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(result, sum of squares of the rounded partial sums) per simulated order, ``t`` the
    terms ``(rows, n)`` in the accumulation dtype."""
    dt = t.dtype
    out = []
    seq = np.cumsum(t, axis=1, dtype=dt)
    out.append((seq[:, -1], _sq(seq[:, 1:])))
    n = t.shape[1]
    for lanes in LANES:
        if n <= lanes:
            continue
        lane = np.cumsum(_pad(t, lanes).reshape(t.shape[0], -1, lanes), axis=1, dtype=dt)
        total, sq = _pairwise(np.ascontiguousarray(lane[:, -1, :]))
        out.append((total, sq + _sq(lane[:, 1:, :])))
    for chunk in CHUNKS:
        if n <= chunk:
            continue
        part = np.cumsum(_pad(t, chunk).reshape(t.shape[0], -1, chunk), axis=2, dtype=dt)
        across = np.cumsum(part[:, :, -1], axis=1, dtype=dt)
        out.append((across[:, -1], _sq(part[:, :, 1:]) + _sq(across[:, 1:])))
    out.append(_pairwise(t.copy()))
    return out


def ordered_sum_bound(x: torch.Tensor, dims: Any, out_shape: Any, u: float, lam: float) -> torch.Tensor | None:
    """Error bound of ``x.sum(dims)`` computed in the usual kernel orders (module docstring).

    Parameters
    ----------
    x:
        The summed operand, floating (float64 in the oracle's run), any shape.
    dims:
        The summed dims (None or empty: every dim), as ``sum.dim_IntList`` takes them.
    out_shape:
        The sum's output shape (keepdim or not); the result is reshaped to it.
    u:
        Unit roundoff of the accumulation dtype; only float32's (2^-24) is simulated.
    lam:
        The probabilistic bound's lambda (:data:`kstrata.verify.tolerance_reduction.LAMBDA`).

    Returns
    -------
    torch.Tensor or None
        float64, ``out_shape``: per output, ``ORDER_MARGIN`` times the largest over the orders of
        max(actual error, ``lam * u * sqrt(sum of squared rounded values)``), in the units of the sum
        (a caller bounding a mean divides by ``n``). None where the dtype is not simulated; inf where ``x``
        holds a non-finite value or an order overflows (inf there: the caller keeps its own bound).
    """
    dtype = _SIMULATED.get(u)
    if dtype is None or x.dim() == 0 or not x.is_floating_point():
        return None
    rows, _ = _rows(x.detach().double().cpu(), dims)
    exact = rows.sum(1).numpy()
    t = rows.numpy().astype(dtype)
    leaves = _sq(t)  # the terms' own rounding where they are not exact (small beside the partial sums)
    best = np.zeros(rows.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):  # an order that overflows: inf, the caller's bound stays
        for total, sq in _orders(t):
            err = np.abs(total.astype(np.float64) - exact)
            best = np.maximum(best, np.maximum(err, lam * u * np.sqrt(sq + leaves)))
        best = np.where(np.isnan(best), np.inf, best)
    return torch.from_numpy(best * ORDER_MARGIN).reshape(out_shape).to(x.device)


def _hillis_steele(t: np.ndarray) -> np.ndarray:
    """Inclusive scan along axis 1 by Hillis & Steele's doubling (``y[i] += y[i - 2^j]``), in ``t``'s dtype."""
    y = t.copy()
    step = 1
    while step < y.shape[1]:
        y[:, step:] = y[:, step:] + y[:, :-step]
        step *= 2
    return y


def _chunked_scan(t: np.ndarray, chunk: int) -> np.ndarray:
    """Inclusive scan along axis 1: each chunk scanned left to right, plus the left-to-right sum of the
    earlier chunks' totals (a block scan's carry), in ``t``'s dtype."""
    rows, n = t.shape
    local = np.cumsum(_pad(t, chunk).reshape(rows, -1, chunk), axis=2, dtype=t.dtype)
    carry = np.cumsum(local[:, :, -1], axis=1, dtype=t.dtype)
    carry = np.concatenate([np.zeros((rows, 1), t.dtype), carry[:, :-1]], axis=1)
    return (local + carry[:, :, None]).reshape(rows, -1)[:, :n]


def ordered_scan_bound(x: torch.Tensor, dim: int, u: float, lam: float) -> torch.Tensor | None:
    """Error bound of ``torch.cumsum(x, dim)`` computed in the usual kernel orders, per output element.

    The orders: left to right; chunks of :data:`CHUNKS` scanned left to right plus a carried total;
    Hillis & Steele's doubling scan. Per element, ``ORDER_MARGIN`` times the largest of their actual
    errors against the float64 scan and ``lam * u * sqrt(sum_{j<=k} (s_j^2 + t_j^2))`` over the left-to-right
    order's rounded prefixes ``s_j`` and terms ``t_j`` (module docstring). A scan that never added one of
    65537 centred terms passed the ``sqrt(n) * sum|x|`` allowance of every later prefix (red-team rt70).

    Parameters
    ----------
    x:
        The scanned operand, floating (float64 in the oracle's run), at least 1-D.
    dim:
        The scanned dim.
    u, lam:
        As :func:`ordered_sum_bound`.

    Returns
    -------
    torch.Tensor or None
        float64, ``x``'s shape; None where the dtype is not simulated; inf where an order overflows.
    """
    dtype = _SIMULATED.get(u)
    if dtype is None or x.dim() == 0 or not x.is_floating_point():
        return None
    moved = x.detach().double().cpu().movedim(dim, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    exact = torch.cumsum(rows, 1).numpy()
    t = rows.numpy().astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        seq = np.cumsum(t, axis=1, dtype=dtype)
        s64, t64 = seq.astype(np.float64), t.astype(np.float64)
        best = lam * u * np.sqrt(np.cumsum(s64 * s64 + t64 * t64, axis=1))
        for out in [seq] + [_chunked_scan(t, c) for c in CHUNKS] + [_hillis_steele(t)]:
            best = np.maximum(best, np.abs(out.astype(np.float64) - exact))
        best = np.where(np.isnan(best), np.inf, best)
    return torch.from_numpy(best * ORDER_MARGIN).reshape(moved.shape).movedim(-1, dim).to(x.device)
