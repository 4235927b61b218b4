"""The rounding error of a matrix product's sums, from their partial sums (red-team rt73).

:mod:`kstrata.verify.tolerance_reduction` allowed every matrix product
(``mm``, ``bmm``, ``mv``, ``dot``, ``addmm``, ``addmv``, ``baddbmm``) with
``K`` terms per output ``lambda * sqrt(K) * u * (|A| |B|)``: every partial sum
bounded by ``sum_k |a_k b_k|``. Where the products cancel (centred data, every
GEMM and GEMV task's normal draw) the partial sums are of order
``sqrt(K) * |a b|``, and that allowance was ~600 times what a float32 product
in any usual order errs: a GEMV that read ``A`` and ``x`` as TF32 (10-bit
mantissa) for ``4096 < K < 8192`` read correct over 139 tests (case
``tests/verify/cases/rt73_gemv_tf32_long_k``), as would one that skips the
products of smallest magnitude.

:func:`ordered_product_bound` bounds the first-order error of the left-to-right
order from its partial sums, as
:func:`kstrata.verify.summation_orders.ordered_sum_bound` does for a plain sum:
``lambda * u * sqrt(sum_k s_k^2 + sum_k p_k^2)`` over the partial sums ``s_k``
and the products ``p_k = a_k b_k`` (each rounded once unless fused; Higham &
Mary, SIAM J. Sci. Comput. 41(5), 2019, Thm. 3.1, on independent mean-zero
rounding errors). The left-to-right order has the largest partial sums of the
orders kernels use (k-tiles accumulated in registers, split-K, trees sum
shorter ranges); :data:`kstrata.verify.summation_orders.ORDER_MARGIN` covers
the rest. The ``K`` partial sums of each output are not formed (``M x N x K``
values): ``K`` is cut into blocks of ``L`` terms, the product is accumulated
block by block, and within a block ``s = s_0 + r_j`` with ``s_0`` the sum
before it, so ``sum_j s^2 <= 2 L s_0^2 + 2 sum_j r_j^2`` and by Cauchy-Schwarz
``sum_j r_j^2 <= L^2 sum_block p^2``: an upper bound of ``sum_k s_k^2`` that
costs one float64 product plus ``(|A|^2)(|B|^2)``, and exceeds it by a factor
of about 3 on centred data for ``L ~ sqrt(K / 2)``.

Every convolution (1-, 2- or 3-D, grouped, transposed; ``aten.convolution``)
is bounded the same way with its input channels as the blocks
(:func:`ordered_convolution_bound`): each block's partial sum is the
convolution of those channels, and ``sum_k p_k^2`` the convolution of
``x^2`` with ``w^2``. Red-team rt73 bounded only 1-D/2-D, one-group,
not-transposed convolutions (through im2col); rt76: TF32 inputs to a
grouped convolution (256 channels a group, K = 2304), a 3-D one (K = 3456)
and a transposed one (K = 2304) read within the old ``sqrt(K) |W||x|``
allowance (cases ``tests/verify/cases/rt76_*_tf32``).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from kstrata.verify.summation_orders import ORDER_MARGIN

_aten = torch.ops.aten
#: Products whose operands are (A, B) (mm, bmm, mv, dot) or (C, A, B) with beta, alpha (addmm, addmv, baddbmm).
PLAIN_PRODUCTS = {_aten.mm.default, _aten.bmm.default, _aten.mv.default, _aten.dot.default}
ADDED_PRODUCTS = {_aten.addmm.default, _aten.addmv.default, _aten.baddbmm.default}
#: Most blocks ``K`` is cut into (each costs a pass over the ``M x N`` output: at 2053 x 2053 x 2053, 128
#: blocks cost 10 float64 products' CPU time, 32 blocks 6, with a bound 1.7 times looser).
MAX_BLOCKS = 128
#: Output elements times blocks, at most, unless that leaves fewer than :data:`MIN_BLOCKS`.
BLOCK_BUDGET = 1 << 27
MIN_BLOCKS = 16


def _operands(func: Any, args: tuple, kwargs: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None] | None:
    """``(A (..., M, K), B (..., K, N), C or None)`` in float64 with ``alpha`` folded into ``A`` and
    ``beta`` into ``C`` (broadcastable to the product); None for an op or operands it cannot read."""
    if func in ADDED_PRODUCTS:
        named = dict(zip(("beta", "alpha"), args[3:5]))
        named.update(kwargs)
        c, a, b = args[0], args[1], args[2]
        beta, alpha = named.get("beta", 1), named.get("alpha", 1)
        c = None if c is None or beta == 0 else c.double() * beta
        a = a.double() * alpha
    else:
        a, b, c = args[0].double(), args[1].double(), None
    if func in (_aten.mv.default, _aten.addmv.default):
        b = b.unsqueeze(-1)
        c = None if c is None else c.unsqueeze(-1)
    elif func is _aten.dot.default:
        a, b = a.unsqueeze(0), b.unsqueeze(-1)
    return a, b.double(), c


def ordered_product_bound(func: Any, args: tuple, kwargs: dict, out_shape: Any, u: float,
                          lam: float) -> torch.Tensor | None:
    """Error bound of a matrix product computed in the usual kernel orders (module docstring).

    Parameters
    ----------
    func:
        The aten op: one of :data:`PLAIN_PRODUCTS` or :data:`ADDED_PRODUCTS`, or ``convolution``
        (:func:`ordered_convolution_bound`).
    args, kwargs:
        Its arguments (floating tensors, float64 in the oracle's run).
    out_shape:
        The op's output shape; the result is reshaped to it.
    u:
        Unit roundoff of the accumulation dtype (float32's 2^-24 for float32, float16, bfloat16 tasks).
    lam:
        The probabilistic bound's lambda (:data:`kstrata.verify.tolerance_reduction.LAMBDA`).

    Returns
    -------
    torch.Tensor or None
        float64, ``out_shape``: ``ORDER_MARGIN * lam * u * sqrt(2 sum_k s_k^2 + 2 K c^2 + sum_k p_k^2 + c^2)``
        per output, an upper estimate of the left-to-right partial sums' squares with the added term
        ``c`` (beta times the bias) first or last; None for another op or operands it cannot read; inf
        where a value is not finite (the caller keeps its own bound there).
    """
    if func is _aten.convolution.default:
        return ordered_convolution_bound(args, out_shape, u, lam)
    if func not in PLAIN_PRODUCTS and func not in ADDED_PRODUCTS:
        return None
    operands = _operands(func, args, kwargs)
    if operands is None:
        return None
    a, b, c = operands
    k = int(a.shape[-1])
    if k == 0 or not math.isfinite(u):
        return None
    outputs = math.prod(torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])) * int(a.shape[-2]) * int(b.shape[-1])
    blocks = min(k, MAX_BLOCKS, max(1, math.ceil(k / math.sqrt(max(k / 2, 1)))),
                 max(MIN_BLOCKS, BLOCK_BUDGET // max(outputs, 1)))
    step = math.ceil(k / blocks)
    s = a[..., :step] @ b[..., :step, :]
    starts = torch.zeros_like(s)  # sum over blocks of L * s_0^2
    for lo in range(step, k, step):
        hi = min(k, lo + step)
        starts.addcmul_(s, s, value=hi - lo)
        s.add_(a[..., lo:hi] @ b[..., lo:hi, :])
    leaves = (a * a) @ (b * b)  # sum_k p_k^2
    return _bound(starts, step, (a * a) @ (b * b), c, k, u, lam, out_shape)


def _bound(starts: torch.Tensor, step: int, leaves: torch.Tensor, c: torch.Tensor | None, k: int, u: float,
           lam: float, out_shape: Any) -> torch.Tensor:
    """``ORDER_MARGIN * lam * u * sqrt(2 starts + 2 step^2 leaves + leaves)``, with the added term ``c``
    first or last (module docstring); inf where not finite."""
    sq = 2 * starts + 2 * step * step * leaves + leaves
    if c is not None:
        c2 = torch.broadcast_to(c * c, sq.shape)
        sq = 2 * sq + (2 * k + 1) * c2
    bound = (ORDER_MARGIN * lam * u) * sq.sqrt()
    bound = torch.where(torch.isfinite(bound), bound, torch.full_like(bound, math.inf))
    return bound.reshape(out_shape)


def ordered_convolution_bound(args: tuple, out_shape: Any, u: float, lam: float) -> torch.Tensor | None:
    """The left-to-right bound of :func:`ordered_product_bound` for ``aten.convolution`` of any kind.

    ``args`` are ``(x (N, C_in, *spatial), w, bias, stride, padding, dilation, transposed, output_padding,
    groups)``; ``w`` is ``(C_out, C_in / groups, *kernel)``, or ``(C_in, C_out / groups, *kernel)`` when
    transposed. Each output sums at most ``K = C_in / groups * prod(kernel)`` products, taken channel by
    channel; the channels of every group are cut into the same blocks of ``step`` channels
    (``L = step * prod(kernel)`` terms), a block's partial sum is the convolution of those channels
    (float64) and ``sum_k p_k^2`` is ``conv(x^2, w^2)``. Returns float64 ``out_shape``, or None for
    operands it cannot read (not floating, depthwise: one channel a group, where ``K`` is the kernel's
    size and the caller's ``sqrt(K) |W||x|`` is as tight)."""
    x, w, bias = args[0], args[1], args[2]
    transposed, groups = bool(args[6]), int(args[8])
    if not (isinstance(x, torch.Tensor) and isinstance(w, torch.Tensor)) or x.dim() < 3 or not math.isfinite(u):
        return None
    per_group = int(x.shape[1]) // max(groups, 1)
    kernel = math.prod(int(d) for d in w.shape[2:])
    k = per_group * kernel
    if per_group <= 1 or k <= 1:
        return None
    x, w = x.double(), w.double()
    rest = list(args[3:])
    outputs = math.prod(int(d) for d in out_shape)
    blocks = min(per_group, MAX_BLOCKS, max(1, math.ceil(k / math.sqrt(max(k / 2, 1)))),
                 max(MIN_BLOCKS, BLOCK_BUDGET // max(outputs, 1)))
    step = math.ceil(per_group / blocks)

    def part(lo: int, hi: int) -> torch.Tensor:
        idx = torch.cat([torch.arange(g * per_group + lo, g * per_group + hi) for g in range(groups)])
        ws = w[idx] if transposed else w[:, lo:hi]
        return _aten.convolution.default(x[:, idx], ws, None, *rest)

    s = part(0, step)
    starts = torch.zeros_like(s)
    for lo in range(step, per_group, step):
        hi = min(per_group, lo + step)
        starts.addcmul_(s, s, value=(hi - lo) * kernel)
        s.add_(part(lo, hi))
    leaves = _aten.convolution.default(x * x, w * w, None, *rest)
    c = None if bias is None else bias.double().reshape(-1, *([1] * (x.dim() - 2)))
    return _bound(starts, step * kernel, leaves, c, k, u, lam, out_shape)
