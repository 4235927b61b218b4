"""The error a correct but differently ordered reduction may make (issue #23).

A candidate that sums in another order than PyTorch (sequentially, in other
blocks, with another tree) differs from the float64 oracle by an amount that
grows with the number of summed terms and with their magnitudes, not with the
output's: where terms cancel (a mean of centred data, the log-sum-exp of
cross-entropy, a variance) an elementwise ``rtol * |oracle|`` is no bound.
This module derives the allowance from the error bound of the reductions the
reference itself performs (the policy, with sources, is in
:mod:`kstrata.verify.tolerance`'s docstring):

1. The float64 oracle is run once more under a dispatch mode
   (:class:`_Perturb`). Composite reductions (layer/batch/group norm,
   softmax, log-softmax, log-sum-exp, NLL, variance, norms) are decomposed by
   PyTorch's own decomposition table into the sums they are made of.
2. Each summing op (``sum``, ``mean``, ``mm``/``bmm``/``addmm``/``baddbmm``/
   ``mv``/``dot``, ``convolution``) with ``n`` terms per output element
   gets its result moved by ``sigma * m``, ``sigma`` a random sign per
   element and ``m`` the larger of

   - the probabilistic bound ``lambda * sqrt(n) * u * S`` (rounding errors
     independent and mean zero), ``S`` the same op applied to the absolute
     values of its operands (for a sum, ``sum |x_i|``; for a product,
     ``|A| |B|``), ``u`` the unit roundoff of the task dtype, ``lambda``
     :data:`LAMBDA`;
   - for ``sum``/``mean`` only, the worst-case bound of the left-to-right
     order, ``u * sum_k |s_k|`` over its partial sums ``s_k`` (Higham's
     eq. (4.3), first order; divided by ``n`` for a mean), capped at
     ``gamma_{N_c - 1} * S`` (:func:`worst_case_terms`). Where the terms
     nearly cancel it is about ``sqrt(n) * u * S`` and adds nothing; where
     they are nearly equal it is about ``n/2 * u * S``, the size of the
     systematic error such a sum really makes (:func:`left_to_right`);
   - for a ``sum``/``mean`` of more than ``N_c`` terms (:func:`worst_case_terms`),
     at most the bound of the orders kernels use, simulated on the operand
     (:func:`kstrata.verify.summation_orders.ordered_sum_bound`): where the
     terms cancel, ``sqrt(n) * S`` overstates the partial sums, and a sum of
     65537 normal terms missing one term passed (red-team rt70); a scan's
     (``cumsum``) likewise per prefix
     (:func:`kstrata.verify.summation_orders.ordered_scan_bound`);
   - for a matrix product or a convolution, at most the bound of the
     left-to-right order's partial sums
     (:func:`kstrata.verify.product_orders.ordered_product_bound`): a GEMV
     reading TF32 at K = 4099 passed ``sqrt(K) * |A||x|`` (red-team rt73).
3. The moved outputs' distance from the oracle's, elementwise, maximised over
   :func:`sign_draws` sign draws (each after the first flips the first's signs
   of the summing ops whose index has one bit set, so every pair of ops is seen
   with both relative signs: :meth:`_Perturb._sign`) and multiplied by
   :data:`SAFETY`, is the
   allowance; it carries each reduction's bound through the ops after it
   (first order), e.g. the mean's and the variance's bounds through
   LayerNorm's ``(x - mean) / std``.

The allowance is computed only for a test whose candidate failed the plain
bound (it costs one float64 forward per draw), then the comparison is made
again with it added (:func:`kstrata.verify.tolerance.compare`, ``extra``).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kstrata.verify.product_orders import ordered_product_bound
from kstrata.verify.summation_orders import ordered_scan_bound, ordered_sum_bound

#: Higham & Mary's lambda: the probabilistic bound holds with probability at
#: least ``1 - 2 exp(-lambda^2 / 2)`` (lambda = 6: 1 - 3e-8) per sum.
LAMBDA = 6.0
#: Sign draws whose elementwise maximum is taken, at least (:func:`sign_draws`).
DRAWS = 2


def sign_draws(ops: int) -> int:
    """Sign draws for a forward of ``ops`` summing ops: the first random, then one per bit of an op's index
    (:meth:`_Perturb._sign`), so that any two ops differ in some draw's flip: ``1 + ceil(log2(ops))``, at
    least :data:`DRAWS` (each draw one float64 forward, on tests that fail the plain bound only). Until
    red-team rt76 at most 4: past 8 ops, ops 0 and 8 kept one relative sign in every draw, and the same sum
    taken twice and subtracted got no allowance on half its rows."""
    return max(DRAWS, 1 + math.ceil(math.log2(max(ops, 1))))


#: Factor over the drawn maximum (a draw's signs can partly cancel where
#: several reductions feed one output).
SAFETY = 2.0
#: A mean's division, in units of ``u`` of the result, where no order of its sum rounds (the grid and
#: ties draws; :func:`exact_in_any_order`): 2 ulp (an ulp is at most ``2u`` of the value), the largest
#: error of the division a GPU kernel makes by default (PTX ``div.full.f32`` and CUDA's ``__fdividef``:
#: 2 ulp, CUDA C++ Programming Guide, "Intrinsic Functions"; Triton's ``/`` on float32). A correctly
#: rounded division errs half an ulp. Triton's one-pass LayerNorm (its tutorial's) on an H100 read
#: incorrect on the ties draw at B=1, D=3: the constant row's mean 3c/3 came out an ulp or two off c,
#: and ``(x - mean) / sqrt(var + eps)`` multiplied that by 1/sqrt(eps) = 316, where the allowance was 0.
MEAN_DIVISION_U = 4.0

#: Unit roundoff of the task dtypes (2^-t, t the significand's bits incl. the implicit one).
UNIT_ROUNDOFF: dict[torch.dtype, float] = {
    torch.float32: 2.0 ** -24,
    torch.float16: 2.0 ** -11,
    torch.bfloat16: 2.0 ** -8,
    torch.float64: 2.0 ** -53,
}

_aten = torch.ops.aten


def gamma(m: int, u: float) -> float:
    """Higham's ``gamma_m = m*u / (1 - m*u)`` (*Accuracy and Stability of
    Numerical Algorithms*, 2nd ed., sec. 3.1, eq. (3.8)); ``inf`` once
    ``m*u >= 1``. ``m`` >= 0 terms, ``u`` the unit roundoff (dimensionless)."""
    mu = max(m, 0) * u
    return math.inf if mu >= 1 else mu / (1 - mu)


def worst_case_terms(u: float) -> int:
    """``N_c = floor((SAFETY * u)^(-1/2))``: the longest sum whose worst-case
    allowance ``SAFETY * gamma_{N_c - 1} * S`` (:func:`gamma`) stays below
    one term's share ``S / N_c``, so that a dropped term, or a mean divided
    by ``n - 1``, still fails. 2896 for fp32, 32 for fp16, 11 for bf16 (u
    from :data:`UNIT_ROUNDOFF`, ``SAFETY`` 2). Past it the worst case could
    not tell such an error from rounding, and only the probabilistic bound
    applies."""
    return int(math.floor((SAFETY * u) ** -0.5 + 1e-9))


def left_to_right(x: torch.Tensor, dims: Any, out_shape: Any) -> torch.Tensor:
    """``sum_k |s_k|`` per output element: the partial sums ``s_k`` of ``x``
    summed over ``dims`` (None or []: every dim) in row-major order, in
    ``x``'s dtype (float64 here).

    Times the unit roundoff it is the first-order worst-case error of that
    left-to-right sum (Higham, sec. 4.2, eq. (4.3):
    ``|E_n| <= u * sum_{k=2..n} |s_k|``). For n nearly equal terms it is
    about ``n/2 * S``, and a float32 loop really errs by 0.1 to 0.2 * n * u * S
    there (every addition in one binade rounds the same way; measured for
    n = 4096 to 4 * 2^20 with terms 8.3 +- 1e-3 and -10 + U(0, 1)), which
    the probabilistic bound ``6 * sqrt(n) * u * S`` misses once n > ~2000.

    Returns a tensor of ``out_shape`` (the op's output, keepdim or not).
    """
    nd = x.dim()
    if nd == 0:
        return x.abs().reshape(out_shape)
    red = sorted({int(d) % nd for d in dims}) if dims else list(range(nd))
    keep = [d for d in range(nd) if d not in red]
    rows = x.permute(*keep, *red).reshape(*[x.shape[d] for d in keep], -1)
    return rows.cumsum(-1).abs_().sum(-1).reshape(out_shape)


#: Plain sums whose left-to-right worst case is added (:func:`left_to_right`): op -> is a mean.
_PLAIN = {_aten.sum.default: False, _aten.sum.dim_IntList: False, _aten.mean.default: True,
          _aten.mean.dim: True}


def _numel(shape: Any) -> int:
    return math.prod(int(d) for d in shape) if len(shape) else 1


def _terms(func: Any, args: tuple, out: torch.Tensor) -> int:
    """Terms summed into one output element of ``func(*args) -> out``."""
    if func in (_aten.mm.default, _aten.bmm.default, _aten.mv.default, _aten.dot.default):
        return int(args[0].shape[-1])
    if func in (_aten.addmm.default, _aten.baddbmm.default, _aten.addmv.default):
        return int(args[1].shape[-1]) + 1
    if func is _aten.convolution.default:
        w, groups = args[1], int(args[8])
        transposed = bool(args[6])
        per = _numel(w.shape[2:]) * (int(w.shape[0]) // max(groups, 1) if transposed else int(w.shape[1]))
        return per + (1 if args[2] is not None else 0)
    return max(1, args[0].numel() // max(1, out.numel()))


_SUMS = {
    _aten.sum.default, _aten.sum.dim_IntList, _aten.mean.default, _aten.mean.dim,
    _aten.mm.default, _aten.bmm.default, _aten.mv.default, _aten.dot.default,
    _aten.addmm.default, _aten.baddbmm.default, _aten.addmv.default, _aten.convolution.default,
}
#: Ops that sum terms but carry them into their output (a scan): each element's own prefix.
_SCANS = {_aten.cumsum.default}


#: Finest grid :func:`grid_bits` looks for (multiples of ``2^-MAX_GRID_BITS``).
MAX_GRID_BITS = 24


def grid_bits(x: torch.Tensor) -> int | None:
    """The least ``q`` in ``[0, MAX_GRID_BITS]`` with every element of ``x`` a
    multiple of ``2^-q`` (an integer times ``2^-q``), or None (a finer
    value, NaN or Inf). ``x`` is a floating tensor, float64 here."""
    if not x.numel():
        return 0
    if not torch.isfinite(x).all():
        return None

    def on(q: int) -> bool:
        return bool((torch.ldexp(x, torch.tensor(float(q), dtype=x.dtype)).frac() == 0).all())

    if not on(MAX_GRID_BITS):
        return None
    lo, hi = 0, MAX_GRID_BITS  # on(hi) holds; find the least q that does
    while lo < hi:
        mid = (lo + hi) // 2
        if on(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def exact_in_any_order(func: Any, args: tuple, scale: torch.Tensor, u: float) -> bool:
    """Whether every order of summing ``func(*args)`` is exact in a dtype of
    unit roundoff ``u`` (``t = -log2(u)`` significand bits): each floating
    operand is a multiple of ``2^-q_i``, so each product (or term) is a
    multiple of ``2^-Q``, ``Q`` the sum of the ``q_i`` of a product's factors,
    and every partial sum, in any order, is at most ``max(scale)`` (the op on
    the operands' absolute values; the caller passes ``n`` times a mean's) in
    magnitude. While ``max(scale) * 2^Q <=
    2^t`` all of them are integers times ``2^-Q`` below ``2^t * 2^-Q``, hence
    representable: no addition or product rounds (Higham, sec. 2.1: ``fl(x op
    y) = x op y`` when the result is representable). The ``grid`` input draw
    (:mod:`kstrata.tasks.inputs`) makes this hold for sums and products of
    inputs; a mean's division and the ops after a sum still round, and the
    task's plain bound covers those."""
    floats = [a for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()]
    if not floats or func in _SCANS and len(floats) != 1:
        return False
    bits = [grid_bits(a) for a in floats]
    if any(b is None for b in bits):
        return False
    if func in (_aten.addmm.default, _aten.baddbmm.default, _aten.addmv.default):
        total = max(bits[0], bits[1] + bits[2]) if len(bits) == 3 else sum(bits)
    elif func is _aten.convolution.default:
        total = max(bits[0] + bits[1], bits[2]) if len(bits) == 3 else sum(bits)
    else:
        total = sum(bits)  # a sum/mean/scan: one operand; a product: its two factors
    t = round(-math.log2(u))
    return float(scale.max()) * 2.0 ** total <= 2.0 ** t


class TermCount(TorchDispatchMode):
    """Counts, over a forward run under it, the most terms any summing op (``_SUMS``: sums, means, matrix
    products, convolutions) adds into one output element: ``max_terms`` (1 where none sums). Results are
    the ops' own (nothing moved); the ``quant`` policy's typical cap of a half-precision output grows with
    it (:func:`kstrata.verify.tolerance.half_typical_units`)."""

    def __init__(self) -> None:
        super().__init__()
        self.max_terms = 1

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if func in _SUMS and isinstance(out, torch.Tensor) and out.is_floating_point():
            self.max_terms = max(self.max_terms, _terms(func, args, out))
        return out


def _absolute(x: Any) -> Any:
    return x.abs() if isinstance(x, torch.Tensor) and x.is_floating_point() else x


class _Perturb(TorchDispatchMode):
    """Moves every summing op's result by its error bound (module docstring)."""

    def __init__(self, u: float, gen: torch.Generator, orders: dict[Any, Any] | None = None, draw: int = 0):
        super().__init__()
        self.u, self.gen, self.max_terms, self.draw = u, gen, 1, draw
        # by (summing op's index, op), shared by the sign draws: the ordered-sum bounds of the forward's long
        # sums, and (key ("sign", op)) the first draw's signs
        self.orders, self.calls = (orders if orders is not None else {}), 0

    def _sign(self, op: Any, out: torch.Tensor) -> torch.Tensor:
        """The signs of summing op ``op``'s move: random in the first draw; in draw ``d >= 1`` the first's,
        flipped where bit ``d - 1`` of the op's index is set, so any two ops (their indices differ in some
        bit) whose effects on an output would cancel under one pair of signs add under another: the
        first-order ``|a| + |b|`` (:func:`sign_draws` draws). Two independent draws gave both ops the same
        relative sign half the time: a layernorm's mean and variance moves then cancelled at the elements
        where ``(x - mean) / std`` made them equal, and an honest left-to-right layernorm read 2.2e-4 off
        where its allowance was 4e-6 (red-team rt70, ties draw, D=65537); with one flip of every other op,
        ops 0 and 2 of three kept one relative sign (red-team rt73)."""
        base = self.orders.get(("sign", op)) if self.draw >= 1 else None
        if base is not None and base.shape == out.shape:
            return base.neg() if (op[0] >> (self.draw - 1)) & 1 else base
        sign = torch.randint(0, 2, out.shape, generator=self.gen, dtype=out.dtype, device=self.gen.device) \
            .mul_(2).sub_(1).to(out.device)
        if self.draw == 0:
            self.orders[("sign", op)] = sign
        return sign

    def _at_most(self, move: torch.Tensor, op: Any, out: torch.Tensor, divide: int, bound: Any) -> torch.Tensor:
        """``move`` capped by the kernel-order bound ``bound()`` of op ``op`` (divided by ``divide``: a
        mean's ``n``), computed in the first draw and reused in the second (whose operands differ from the
        first's by first-order moves only); ``move`` itself where there is none."""
        if op not in self.orders:
            self.orders[op] = bound()
        tight = self.orders[op]
        if tight is None or tight.shape != out.shape:
            return move
        return torch.minimum(move, tight / divide)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        from torch._decomp import decomposition_table

        kwargs = kwargs or {}
        name = func.name().split("::")[-1].split(".")[0]
        if name in _MOMENTS:
            named = {a.name: v for a, v in zip(func._schema.arguments, args)}
            named.update(kwargs)
            with self:
                return _moments(name, named.pop("self"), named.get("dim"), correction=named.get("correction"),
                                keepdim=bool(named.get("keepdim", False)), unbiased=named.get("unbiased"))
        if func not in _SUMS and func not in _SCANS and func in decomposition_table \
                and name in _DECOMPOSED:
            with self:
                out = decomposition_table[func](*args, **kwargs)
            if out is not NotImplemented:
                return out
        out = func(*args, **kwargs)
        if (func in _SUMS or func in _SCANS) and isinstance(out, torch.Tensor) and out.is_floating_point():
            op, self.calls = (self.calls, func), self.calls + 1
            if func in _SCANS:
                dim = int(args[1]) % max(out.dim(), 1)
                n = int(out.shape[dim]) if out.dim() else 1
                scale = func(*[_absolute(a) for a in args], **kwargs)
            else:
                n = _terms(func, args, out)
                scale = func(*[_absolute(a) for a in args], **kwargs)
            self.max_terms = max(self.max_terms, n)
            # a mean's partial sums reach n times its scale (the mean of |x|)
            partial = scale * n if func in (_aten.mean.default, _aten.mean.dim) else scale
            if scale.numel() and exact_in_any_order(func, args, partial, self.u):
                if func not in (_aten.mean.default, _aten.mean.dim) or n <= 1:
                    return out  # no order rounds: nothing to allow for (the grid draw)
                # no sum rounds, but a mean's division does: by up to 2 ulp where the kernel divides as a GPU
                # does by default (MEAN_DIVISION_U)
                return out + self._sign(op, out) * (MEAN_DIVISION_U * self.u) * out.abs()
            sign = self._sign(op, out)
            move = (LAMBDA * math.sqrt(n) * self.u) * scale
            if func in _PLAIN and n > 1 and args[0].dim():
                dims = args[1] if func in (_aten.sum.dim_IntList, _aten.mean.dim) and len(args) > 1 else None
                seq = left_to_right(args[0], dims, out.shape).mul_(self.u / (n if _PLAIN[func] else 1))
                move = torch.maximum(move, torch.minimum(seq, gamma(worst_case_terms(self.u) - 1, self.u) * scale))
                if n > worst_case_terms(self.u):  # long sums: the orders kernels use, where smaller (rt70)
                    move = self._at_most(move, op, out, n if _PLAIN[func] else 1,
                                         lambda: ordered_sum_bound(args[0], dims, out.shape, self.u, LAMBDA))
            elif func in _SCANS and n > worst_case_terms(self.u) and args[0].dim():
                move = self._at_most(move, op, out, 1, lambda: ordered_scan_bound(args[0], dim, self.u, LAMBDA))
            elif n > 1:  # matrix products and convolutions (rt73)
                move = self._at_most(move, op, out, 1,
                                     lambda: ordered_product_bound(func, args, kwargs, out.shape, self.u, LAMBDA))
            out = out + sign * move
        return out


#: Moments whose PyTorch decomposition goes to primitives the mode does not see.
_MOMENTS = {"var_mean", "var", "std", "std_mean"}


def _moments(name: str, x: torch.Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False,
             unbiased: Any = None) -> Any:
    """``var``/``std``/``var_mean``/``std_mean`` as the two sums they are
    (``mean``, then ``sum((x - mean)^2) / (n - correction)``), so that each is moved."""
    dims = list(range(x.dim())) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    n = math.prod(int(x.shape[d]) for d in dims) if dims else 1
    corr = 1.0 if correction is None and unbiased is not False else float(correction or 0)
    mean = torch.mean(x, dims, keepdim=True)
    var = torch.sum((x - mean) ** 2, dims, keepdim=keepdim) / max(n - corr, 0)
    mean = mean if keepdim else mean.squeeze(dims) if dims else mean.reshape(())
    first = var.sqrt() if name.startswith("std") else var
    return (first, mean) if name.endswith("_mean") else first


#: Composite ops decomposed into their sums (names without overload).
_DECOMPOSED = {
    "native_layer_norm", "native_batch_norm", "_native_batch_norm_legit_no_training",
    "_native_batch_norm_legit", "_native_batch_norm_legit_functional", "native_group_norm",
    "_softmax", "_log_softmax", "logsumexp", "nll_loss_forward", "nll_loss2d_forward", "linalg_vector_norm", "norm", "frobenius_norm", "cross_entropy_loss", "mse_loss",
    "smooth_l1_loss", "huber_loss", "l1_loss", "kl_div", "binary_cross_entropy", "cosine_similarity",
    "_euclidean_dist", "cdist", "_cdist_forward", "matmul", "linear", "einsum", "tensordot",
}


#: The accumulation dtype a reduction over a task dtype must use at least, as
#: PyTorch's own reductions and matrix products do (float32 accumulators for
#: float16 and bfloat16 on CPU and CUDA, tensor cores included). Summing in
#: the narrow dtype itself gets no allowance for it (``precision.allow_reduced_precision``
#: is about casts a kernel may make, not about its accumulators); a caller
#: that accepts such sums passes ``reduced_accumulation=True``.
ACCUMULATION = {torch.float16: torch.float32, torch.bfloat16: torch.float32}


def reduction_allowance(model64: torch.nn.Module, inputs64: list[Any], oracles: list[torch.Tensor],
                        dtype: torch.dtype, seed: int = 0, torch_seed: int | None = None,
                        reduced_accumulation: bool = False) -> tuple[list[torch.Tensor | None], int]:
    """Elementwise allowance per output for reductions computed in another order.

    Parameters
    ----------
    model64:
        The float64 oracle model.
    inputs64:
        Its inputs (floating tensors in float64), as the oracle got them.
    oracles:
        The oracle's outputs on them (float64, CPU).
    dtype:
        The task dtype. The unit roundoff ``u`` (:data:`UNIT_ROUNDOFF`) is
        that of its accumulation dtype (:data:`ACCUMULATION`: float32 for
        float16 and bfloat16), so a float16 softmax's sum is allowed a
        float32 sum's error, not a float16 one's (which let a softmax 5% too
        large pass at rows of 512; red-team round of 2026-12-02).
    reduced_accumulation:
        The task allows accumulating in ``dtype`` itself: its own ``u`` applies.
    seed:
        Seed of the sign draws (the allowance does not depend on it beyond
        the draws' spread).
    torch_seed:
        Seed of torch's global generator before each forward (as the oracle
        had it), for forwards that draw random numbers; None leaves it.

    Returns
    -------
    (allowances, n)
        One float64 tensor per output (the oracle's shape; None for a
        non-floating output or one whose shape differs), and the largest
        number of terms any reduction of the forward summed (1: none).
        Empty allowances when the oracle cannot be run again.
    """
    u = UNIT_ROUNDOFF.get(dtype if reduced_accumulation else ACCUMULATION.get(dtype, dtype))
    if u is None:
        return [], 1
    gen = torch.Generator().manual_seed(seed)
    best: list[torch.Tensor | None] = [None] * len(oracles)
    n = 1
    from kstrata.verify.runner import flatten

    was = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        orders: dict[Any, Any] = {}
        draws, draw = DRAWS, 0
        while draw < draws:
            mode = _Perturb(u, gen, orders, draw)
            if torch_seed is not None:
                torch.manual_seed(torch_seed)
            with torch.no_grad(), mode:
                outs = flatten(model64(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs64]))
            n = max(n, mode.max_terms)
            for i, (o, g) in enumerate(zip(outs, oracles)):
                if not (isinstance(o, torch.Tensor) and o.is_floating_point() and o.shape == g.shape):
                    continue
                d = (o.detach().double().cpu() - g.detach()).abs_().nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0)
                best[i] = d if best[i] is None else torch.maximum(best[i], d)
            if draw == 0:
                draws = sign_draws(mode.calls)
            draw += 1
    except Exception:  # noqa: BLE001 - a forward the mode cannot trace gets no allowance
        return [], n
    finally:
        torch.set_default_dtype(was)
    return [None if b is None else b.mul_(SAFETY) for b in best], n
