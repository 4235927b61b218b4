"""Comparing a candidate's output with the float64 oracle.

Policy ``oracle`` (default; issue #3): elementwise

    |cand - oracle| <= max(floor, k * native_err) + atol_d + rtol_d * |oracle|

where ``native_err = max |ref_native - oracle|`` is the task reference's own
error in its dtype on the same inputs (so an op whose reference is inexact,
e.g. a long fp32 reduction, gets a proportionate allowance), and
``(atol_d, rtol_d)`` is the dtype bound below. ``floor`` defaults to 0.

Dtype bounds (:data:`DTYPE_BOUNDS`), chosen from the unit roundoff u of the
dtype (fp32 5.96e-8, fp16 4.88e-4, bf16 3.91e-3) so that a correct kernel that
only reorders a reduction passes -- a recursive fp32 sum of n terms has a
relative error bound of about n*u (Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., sec. 4.2), 2.4e-4 for n = 4099, and ~sqrt(n)*u
in practice -- while a TF32 matmul (10-bit mantissa, relative error ~5e-4 to
1e-3) on an fp32 task does not:

=========  ========  ========
dtype      atol      rtol
=========  ========  ========
float64    1e-10     1e-10
float32    1e-5      1e-4   (~840 ulp)
float16    1e-3      2e-3   (~2 ulp)
bfloat16   8e-3      1.6e-2 (~2 ulp)
=========  ========  ========

The ``atol`` column is for an output tensor whose values are of order one:
one whose largest finite value is ``s < 1`` gets ``atol * s``
(:func:`output_scale`), so that a softmax over thousands of columns, whose
outputs are all below ``atol``, is still compared relatively.

Reductions whose order differs from PyTorch's (issue #23; applied by the
judge, :mod:`kstrata.verify.tolerance_reduction`). A sum of n terms computed
in any order satisfies |s_hat - s| <= gamma_{n-1} * sum|x_i|,
gamma_m = m*u / (1 - m*u) (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., sec. 4.2, eq. (4.4)); the pairwise order's bound is
gamma_{ceil(log2 n)} * sum|x_i| (ibid., sec. 4.2). The worst case is vacuous
once n*u >= 1 (n >= 1.7e7 in fp32, reached by a KernelBench batch mean);
with rounding errors modelled as independent and mean zero,
|s_hat - s| <= lambda * sqrt(n) * u * sum|x_i| with probability at least
1 - 2*exp(-lambda^2 / 2) (Higham & Mary, "A new approach to probabilistic
rounding error analysis", SIAM J. Sci. Comput. 41(5), 2019, Thm 3.1).
The scale is sum|x_i|, not |s|: where terms cancel (a mean of centred
data, the max-subtracted log-sum-exp of cross-entropy, a variance)
``rtol * |oracle|`` is not a bound, which is why plain TVM imports of
40_LayerNorm and 95_CrossEntropyLoss failed at KernelBench's sizes, and why
PyTorch's own blocked/pairwise error (``native_err``) cannot stand for a
sequential candidate's (they differ by up to sqrt(n) / log2(n)).

The policy (``tolerance.reductions``, on by default for ``oracle``): when a
test fails the bound above, the judge runs the float64 oracle again with
every summing op of the reference's forward (``sum``, ``mean``, matrix
products, convolutions, and the sums inside norms, softmax, log-softmax,
log-sum-exp, NLL and variances, decomposed by PyTorch's own decomposition
table) moved by ``sigma * m``, sigma a random sign per element and m the
larger of two bounds, u the unit roundoff of the task dtype's accumulation
dtype (fp32 2^-24, also for fp16 and bf16 tasks, whose reductions PyTorch
accumulates in fp32: summing in the narrow dtype is a precision downgrade a
task must allow with ``precision.allow_reduced_precision``; with fp16's own
u a softmax 5% too large passed at rows of 512, red-team round of
2026-12-02):

- probabilistic: ``lambda * sqrt(n) * u * S``, n the op's terms per output
  element, S the same op on the absolute values of its operands (sum|x_i|,
  or |A||B| for a product), lambda = 6 (failure probability 3e-8 per sum);
- worst case, for ``sum``/``mean``: ``u * sum_k |s_k|`` over the partial
  sums s_k of the left-to-right order (Higham, eq. (4.3), first order),
  capped at ``gamma_{N_c - 1} * S`` with ``N_c = floor((2u)^(-1/2))``
  (2896 in fp32). The probabilistic model assumes independent rounding
  errors, which a loop over nearly equal terms breaks: every addition within
  one binade rounds the same way, and a float32 left-to-right sum of terms
  8.3 +- 1e-3 (the batch mean of cross-entropy on the near_zero draw) or
  -10 + U(0, 1) (the shifted draw) errs by 0.1 to 0.2 * n * u * S, measured
  for n = 4096 to 2^22: at 2^22, 220 and 59 times ``sqrt(n) * u * S``. For such
  terms sum_k |s_k| is about n/2 * S; for centred terms it is of order
  sqrt(n) * S and the probabilistic bound decides. The cap keeps the worst
  case strict: up to N_c terms, twice gamma_{n-1} is below one term's share
  1/n, so a dropped term or a count off by one still fails; past it,
  nothing grows with n but the probabilistic bound, so a left-to-right
  float32 sum of more than ~30,000 nearly equal terms is out of policy
  (incorrect; its error exceeds what a dropped term would cost, and PyTorch's
  cascade sum's by ~sqrt(n)): such a reduction must accumulate in blocks or
  pairwise, as vectorized and parallel kernels do (a blocked sum's error
  grows like (b + n/b) * u * S; Blanchard, Higham & Mary, "A class of fast
  and accurate summation algorithms", SIAM J. Sci. Comput. 42(3), 2020).
  At 2^22 terms near -9.5 a loop's LayerNorm is off by 0.2 on outputs of
  size 1 (PyTorch's by 3e-6); it stays incorrect.

A matrix product or a 1-D/2-D convolution gets at most the bound of its
left-to-right order's partial sums, ``lambda * u * sqrt(sum_k s_k^2 +
sum_k p_k^2)`` estimated from above block by block, times 4
(:func:`kstrata.verify.product_orders.ordered_product_bound`): on centred
data ``sqrt(K) * |A||B|`` was ~600 times a float32 product's error, and a
GEMV that read TF32 at K = 4099 passed (red-team rt73).

A summing op whose operands are all on a binary grid so coarse that every
partial sum, in any order, is representable (the ``grid`` input draw:
multiples of 1/64) rounds nowhere, and gets m = 0
(:func:`kstrata.verify.tolerance_reduction.exact_in_any_order`): there a
term dropped at scale cannot hide in the allowance.

The moved outputs' distance from the oracle's, elementwise, maximised over
two sign draws and doubled (an output fed by two reductions, LayerNorm's
mean and variance, can have their draws cancel: each draw gets at least the
larger term with probability 1/2, and the sum of two terms is at most twice
the larger), is added to the bound, and the test is compared again. It is
first-order propagation of each reduction's bound through the ops after it,
so LayerNorm's ``(x - mean) / std`` gets the mean's bound over std plus the
variance's relative bound times |output|. The judge applies it to tests
planned with a float64 oracle. A test planned with the native reference only
(``TestCase.oracle == "native"``: the nominal, timed and large sweep shapes
too costly for the oracle plan) is decided by the plain bound above, against
the float64 oracle once it failed the native one
(:meth:`kstrata.verify.runner.ShapeRun._exact_oracle`), without the
allowance: those tests are there for bugs that only appear at scale, and at
their n the allowance (``12 * sqrt(n) * u * S``: 5e-3 relative at 50M terms)
exceeds the error of a reduction that skips part of its terms (red-team case
02: 4.6% of 50M squared differences skipped, 2.4e-3 relative on the
heavy-tailed draw). So a reduction over millions of terms must be about as
accurate as PyTorch's cascade sum there: a blocked or pairwise order is
(a blocked sum errs about (sqrt(b) + sqrt(n/b)) * u * S), a single
left-to-right loop is not (40_LayerNorm's plain TVM import, one loop over
2^22 terms per row: 2.6e-3 off at its nominal shape where PyTorch is 2.9e-7
off; incorrect by this policy).

It stays strict where the sums are short or do not cancel: at n = 256 a
plain row sum's allowance is at most 3.0e-5 of sum|x_i| (2 * gamma_255; 1.1e-5,
2 * 6 * 16 * 2^-24, for centred terms), so a dropped term, a count
off by one (relative error 1/n = 3.9e-3) or a scale off by 1e-3 fails; the
verifier's small and boundary shapes keep n small. An error below the
rounding bound of the reference's own sums (a variance divided by n - 1 at
n = 4096: relative 1.2e-4) is rounding-sized and no tolerance can tell it
from a correct reordering at that n; the small shapes catch it
(``tests/verify/test_tolerance_reduction.py``).

Policy ``quant`` (KernelBench-X style distribution metrics): cosine similarity
>= ``cosine``, relative L1 ``sum|c-o| / sum|o|`` <= ``rel_l1``, and RMSE
relative to the oracle's RMS <= ``rmse``, and elementwise
``|c - o| <= max(QUANT_ELEMENT_K * rmse * RMS(o), k * native_err)``, where
``native_err`` is the task reference's own max error against the oracle (a
quantization step the reference itself rounds the other way at a tie of
``x / scale``, in fp32 against fp64, is allowed). The aggregate limits are for
rounding that differs everywhere (re-quantization, fp16 accumulation); the
elementwise cap is for outputs that are wrong outright: the last 8 of 4096
GEMV outputs never written (0) moved the RMSE by 0.044, inside 0.10, and read
correct (red-team round of 2026-12-03). An output finer than float16 must also
keep nine in ten of its errors within float16's unit roundoff of the oracle's
RMS (:data:`QUANT_TYPICAL`, or k times the reference's own), and all but
0.01% (:data:`QUANT_TAIL_SHARE`) within four times that: only a
half-precision output accumulates in half precision; a half-precision output
keeps them within :data:`QUANT_TYPICAL_HALF_UNITS` such units (half-precision
accumulation's error, not float8 activations'), or 1.25 sqrt(n) units where the
judge knows the reference's longest sum n (:func:`half_typical_units`: float16
left to right errs ~0.45 sqrt(n), int8 activations ~20 units at every n).
With K = 6 a kernel that spends the whole RMSE allowance on Gaussian-like
errors keeps its largest of 4096 (about 3.9 sigma) inside the cap, and an output missing outright fails whenever its
value exceeds 0.6 of the RMS (more than half of Gaussian outputs). An integer
output (a quantization's int8) under ``quant`` must equal the native reference's
except one quantization step where the exact value before a rounding is within
rounding of a tie, which the judge finds with the float64 oracle
(:mod:`kstrata.verify.rounding`; here it is compared exactly, its stats say
``policy: quant``, ``integer: true``). Policy ``exact``: equality with the
native reference (integer outputs, indices), nothing allowed.

Under every policy a NaN or Inf where the oracle is finite fails, and where
the oracle is not finite the candidate must hold the same non-finite value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from kstrata.tasks.meta import Tolerance

#: dtype -> (atol, rtol); see the module docstring for the rationale.
DTYPE_BOUNDS: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-10, 1e-10),
    torch.float32: (1e-5, 1e-4),
    torch.float16: (1e-3, 2e-3),
    torch.bfloat16: (8e-3, 1.6e-2),
}


@dataclass
class Comparison:
    """Result of comparing one output tensor.

    ``bad`` is a bool mask (oracle's shape) of elements outside the tolerance;
    ``stats`` is JSON-able (max error, bound, counts, metrics).
    """

    ok: bool
    bad: torch.Tensor | None
    stats: dict[str, Any] = field(default_factory=dict)


def dtype_bound(dtype: torch.dtype, tol: Tolerance) -> tuple[float, float]:
    """``(atol, rtol)`` for ``dtype``, overridden by the task's ``atol``/``rtol``."""
    atol, rtol = DTYPE_BOUNDS.get(dtype, (0.0, 0.0))
    return (tol.atol if tol.atol is not None else atol, tol.rtol if tol.rtol is not None else rtol)


def _nonfinite_mismatch(c: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
    """Mask of elements whose finiteness (or non-finite value) differs."""
    of, cf = torch.isfinite(o), torch.isfinite(c)
    bad = of & ~cf
    nf = ~of
    if nf.any():
        same = (torch.isnan(o) & torch.isnan(c)) | (torch.isinf(o) & (c == o))
        bad |= nf & ~same
    return bad


def _max_abs_diff(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> float:
    """max |a - b| over elements where both are finite, computed in float64: ``b`` is
    float64 and ``a`` any floating dtype (promoted exactly, element by element, without
    a float64 copy of it). ``out``: a float64 buffer of ``b``'s shape that receives
    ``|a - b|`` (no allocation)."""
    if not a.numel():
        return 0.0
    d = torch.sub(a, b, out=out).abs_() if out is not None else torch.sub(a, b).abs_()
    m = float(d.max())
    if math.isfinite(m):
        return m
    fin = torch.isfinite(a) & torch.isfinite(b)
    return float(torch.where(fin, d, torch.zeros_like(d)).max())


def output_scale(oracle: torch.Tensor) -> float:
    """``min(1, max |oracle|)`` over the finite elements (1 when there are none).

    The dtype's ``atol`` (:data:`DTYPE_BOUNDS`) stands for the rounding of
    outputs near zero in a tensor whose values are of order one; a tensor
    whose largest value is ``s < 1`` gets ``atol * s``. With the plain
    ``atol`` a softmax over 4099 columns (outputs near 2.4e-4) passed with
    every output 4% off in float32, and a float16 softmax over 4096 columns
    (outputs near 2.4e-4 against an atol of 1e-3) with every row normalised
    twice (red-team round of 2026-12-02, the kind of case 01). A task's own
    ``atol`` is used as given.

    An oracle whose finite values are all exactly zero tells no magnitude: 1,
    as for one that holds an output of order one. With 0 every candidate value
    but an exact zero read wrong: an honest log-sigmoid (-7.9e-37 at x = 83.1,
    the true value) on a task written ``log(1 / (1 + exp(-x)))``, whose float32
    reference and float64 oracle both round ``1 + exp(-x)`` to 1 and give 0, read
    incorrect on a one-element test (red-team rt58, the kind of case 22); there
    the reference's own error, 0 against its oracle, allows nothing either."""
    return _largest_up_to_one(oracle.abs())


def _largest_up_to_one(a: torch.Tensor, m: float | None = None) -> float:
    """:func:`output_scale` of a tensor whose absolute values ``a`` already are (``m``: ``a``'s
    maximum, when the caller has it)."""
    if m is None:
        m = float(a.max()) if a.numel() else 0.0
    if not math.isfinite(m):
        fin = a[torch.isfinite(a)]
        m = float(fin.max()) if fin.numel() else 1.0
    return min(1.0, m) if m > 0 or not a.numel() else 1.0


def compare(cand: torch.Tensor, oracle: torch.Tensor, native: torch.Tensor, tol: Tolerance,
            extra: torch.Tensor | None = None, scale_atol: bool = True, terms: int | None = None) -> Comparison:
    """Compare one candidate output with the oracle under ``tol``.

    Parameters
    ----------
    cand:
        Candidate output, any device; must already have the reference's shape.
    oracle:
        float64 oracle on CPU (or the native output for integer dtypes).
    native:
        The reference's output in the task dtype.
    tol:
        The task's tolerance policy.
    extra:
        An elementwise float64 allowance added to the ``oracle`` policy's
        bound (the oracle's shape): the reordered-reduction allowance of
        :func:`kstrata.verify.tolerance_reduction.reduction_allowance`.
    scale_atol:
        Scale the dtype's ``atol`` to the outputs (:func:`output_scale`).
        :func:`compare_native` does not: its tests get no reordered-reduction
        allowance, and a correct sum in another order over thousands of terms
        of small outputs (gemv on the near_zero draw at 8192 x 8192) needs the
        absolute ``atol`` there.
    terms:
        The most terms any summing op of the reference's forward adds into one
        output element (:class:`kstrata.verify.tolerance_reduction.TermCount`),
        None where unknown: under ``quant`` it sets how far half-precision
        accumulation may move a half-precision output (:func:`half_typical_units`).
    """
    c = cand.detach().cpu()
    n = native.detach().cpu()
    if tol.kind == "exact" or not n.is_floating_point():
        bad = c != n if c.dtype == n.dtype else torch.ones_like(n, dtype=torch.bool)
        if n.is_floating_point():
            bad = bad & ~(torch.isnan(c) & torch.isnan(n))
        # an integer output under the quant policy: exact here, one step at a rounding tie allowed by the
        # judge, which reruns the float64 oracle around the ties (kstrata.verify.rounding)
        policy = "quant" if tol.kind == "quant" and not n.is_floating_point() else "exact"
        return Comparison(not bool(bad.any()), bad, {"policy": policy, "wrong": int(bad.sum()),
                                                     "total": int(n.numel()),
                                                     **({"integer": True} if policy == "quant" else {})})
    o = oracle.detach().cpu().double()
    # the differences are computed in float64 from the task-dtype tensors directly (each element
    # promoted exactly, as a float64 copy would hold it), into one float64 buffer: at a 4096x4096
    # output the judge's comparisons were a quarter of its CPU time, much of it float64 copies
    cx = c if c.is_floating_point() else c.double()  # a bool or integer output: converted as before
    err = torch.empty_like(o) if tol.kind != "quant" and o.shape == n.shape == cx.shape else None
    native_err = _max_abs_diff(n, o, out=err)
    stats: dict[str, Any] = {"policy": tol.kind, "native_err": native_err}
    if tol.kind == "quant":
        return _compare_quant(c.double(), o, tol, stats, n, terms)
    atol, rtol = dtype_bound(n.dtype, tol)
    bound = o.abs()
    largest = float(bound.max()) if bound.numel() else 0.0  # NaN or inf unless o is all finite
    if tol.atol is None and scale_atol:
        atol *= _largest_up_to_one(bound, largest)
    allowance = max(tol.floor or 0.0, tol.k * native_err)
    err = torch.sub(cx, o, out=err).abs_() if err is not None else torch.sub(cx, o).abs_()
    bound.mul_(rtol).add_(allowance + atol)
    if extra is not None and extra.shape == bound.shape:
        bound.add_(extra)
        stats["reduction_allowance_max"] = float(extra.max()) if extra.numel() else 0.0
    bad = torch.le(err, bound).logical_not_()  # NaN/Inf in the candidate compare False -> bad
    del bound
    if not math.isfinite(largest):
        cd = c.double()
        nf = ~torch.isfinite(o)
        bad = torch.where(nf, _nonfinite_mismatch(cd, o), bad)
        stats["oracle_nonfinite_wrong"] = int((nf & bad).sum())
    nbad = int(torch.count_nonzero(bad))
    stats.update(allowance=allowance, atol=atol, rtol=rtol, wrong=nbad, total=int(o.numel()))
    if nbad:
        fin = torch.isfinite(err)
        stats["max_err"] = float(err[fin].max()) if fin.any() else float("inf")
        stats["nonfinite_wrong"] = int((torch.isfinite(o) & ~torch.isfinite(cx)).sum())
    else:
        stats["max_err"] = float(err.max()) if err.numel() else 0.0
    return Comparison(nbad == 0, bad if nbad else None, stats)


#: Elementwise cap of the ``quant`` policy, in units of its RMSE limit times the oracle's RMS.
QUANT_ELEMENT_K = 6.0
#: Under ``quant``, the largest error of the :data:`QUANT_TYPICAL_SHARE` smallest of an output finer than
#: float16, relative to the oracle's RMS: float16's unit roundoff (2^-11). The aggregate limits stand for
#: re-quantization, which moves a few elements at rounding ties (none of these), and for half-precision
#: accumulation, which only a
#: half-precision output has: a float32 output whose typical element is off by more than a float16
#: rounding was computed on fewer bits than its contract (red-team rt67: a w8a8 GEMM on int6 activations,
#: every output ~2% off, passed cosine 0.95, rel_l1 0.05, RMSE 0.10).
QUANT_TYPICAL = 2.0**-11
#: Under ``quant``, the same quantile's cap for a float16 or bfloat16 output, in units of float16's roundoff
#: of the oracle's RMS (64: 3.1% of the RMS). Half-precision accumulation is allowed there and its error grows
#: with K (float16 left to right: 5.5 units at K=128, 30 at 4096, 43 at 8192; in float16 across 32-wide fp32
#: k-tiles, 1.4 to 7.8); activations rounded to float8 e4m3 instead of float16 (a W4A8 GEMM in a W4A16
#: task, twice the tensor-core rate) err 88 units at every K, and passed the aggregate limits at every
#: shape above a few rows (red-team rt70, case rt70_w4a16_float8_activations).
QUANT_TYPICAL_HALF_UNITS = 64.0
#: Under ``quant``, the typical cap of a half-precision output whose reference sums ``n`` terms into an element,
#: in the same units, where that ``n`` is known: this many times ``sqrt(n)`` (at least
#: :data:`QUANT_TYPICAL_HALF_FLOOR`, at most :data:`QUANT_TYPICAL_HALF_UNITS`). Float16 left to right, the
#: least accurate order a half-precision kernel uses, errs 0.43 to 0.60 sqrt(n) units on outputs of 64 and more
#: elements (0.73 at most on the 77 outputs of w4a16_gemv at K=128, uniform; 6 seeds x 3 draws of every
#: w4a16 shape; float16 products, two lanes and 16-wide fp32 chunks added in float16 err less); int8 per-token
#: activations instead of float16 ones err ~20 units at every K (1.6 sqrt(K) at K=128, 1.2 at 384): with the
#: flat 64 units a W4A8 kernel read correct on every w4a16_gemm shape (red-team rt76, case
#: rt76_w4a16_int8_activations). Past K ~ 400 the two overlap and size alone cannot tell them apart.
QUANT_TYPICAL_HALF_PER_SQRT_TERM = 1.25
#: The least typical cap (units as above) a half-precision output gets from its sum length: an output of no or
#: short sums still rounds once or a few times in float16 (1.6 units at the 90% quantile for one rounding).
QUANT_TYPICAL_HALF_FLOOR = 8.0
#: The fewest elements an output needs for the sum-length cap: the quantile of fewer is an order statistic
#: of a handful (float16 left to right reached 0.86 sqrt(K) on 3 outputs at K=128): the flat cap applies.
QUANT_TYPICAL_HALF_MIN_ELEMENTS = 64
#: The share of elements :data:`QUANT_TYPICAL` bounds: a median alone let a kernel take the shortcut on just
#: under half of the output (half the rows of the int6 GEMM).
QUANT_TYPICAL_SHARE = 0.9
#: Elements the quantile of :data:`QUANT_TYPICAL` is taken over, at most (an even stride through the output).
QUANT_TYPICAL_SAMPLE = 1 << 20
#: Under ``quant``, an output finer than float16 may have at most the larger of :data:`QUANT_TAIL_MIN`
#: elements, :data:`QUANT_TAIL_SHARE` of its elements and k times the reference's own count more than this
#: many typical caps off. The 10% past the typical quantile were bounded only by the elementwise cap
#: (6 * rmse * RMS), and a fake quantization whose last partial 16-row tile shared one scale (15 of 8191 rows
#: on a coarser grid, 0.18% of the elements, each up to half a step off: ~30 typical caps) read correct on
#: six of eight draws (red-team rt73, case rt73_quant_tail_tile_scale). An honest quantize-dequantize differs
#: only at rounding ties (1e-6 to 4e-6 of the elements at T=8191, D=512, whatever its op order); the
#: faulty tile 4e-4 (uniform) to 1.6e-3.
QUANT_TAIL_K = 4.0
#: See :data:`QUANT_TAIL_K`: a share of ties well above an honest kernel's against the fp32 reference (the
#: native-only nominal tests compare with it).
QUANT_TAIL_SHARE = 1e-4
#: See :data:`QUANT_TAIL_K`: the count any output may have (a few ties in a small output).
QUANT_TAIL_MIN = 16


def _typical_abs(err: torch.Tensor) -> float:
    """The :data:`QUANT_TYPICAL_SHARE` quantile of ``err`` (float64, finite) over at most
    :data:`QUANT_TYPICAL_SAMPLE` evenly strided elements (0.0 for none)."""
    flat = err.flatten()
    if not flat.numel():
        return 0.0
    flat = flat[:: max(1, flat.numel() // QUANT_TYPICAL_SAMPLE)]
    return float(flat.kthvalue(max(1, math.ceil(QUANT_TYPICAL_SHARE * flat.numel()))).values)


def half_typical_units(terms: int | None, elements: int) -> float:
    """The typical cap of a half-precision output under ``quant``, in units of float16's roundoff of the
    oracle's RMS: :data:`QUANT_TYPICAL_HALF_PER_SQRT_TERM` ``* sqrt(terms)`` within
    [:data:`QUANT_TYPICAL_HALF_FLOOR`, :data:`QUANT_TYPICAL_HALF_UNITS`] for an output of at least
    :data:`QUANT_TYPICAL_HALF_MIN_ELEMENTS` ``elements`` whose reference's longest sum ``terms`` is known;
    :data:`QUANT_TYPICAL_HALF_UNITS` otherwise."""
    if terms is None or terms < 1 or elements < QUANT_TYPICAL_HALF_MIN_ELEMENTS:
        return QUANT_TYPICAL_HALF_UNITS
    return min(QUANT_TYPICAL_HALF_UNITS, max(QUANT_TYPICAL_HALF_FLOOR,
                                             QUANT_TYPICAL_HALF_PER_SQRT_TERM * math.sqrt(terms)))


def _compare_quant(cd: torch.Tensor, o: torch.Tensor, tol: Tolerance, stats: dict[str, Any],
                   native: torch.Tensor | None = None, terms: int | None = None) -> Comparison:
    nonfinite = _nonfinite_mismatch(cd, o)
    fin = torch.isfinite(o) & torch.isfinite(cd)
    ov, cv = o[fin], cd[fin]
    err = (cv - ov).abs()
    cos = float(torch.nn.functional.cosine_similarity(ov.flatten(), cv.flatten(), dim=0)) if ov.numel() else 1.0
    rel_l1 = float(err.sum() / ov.abs().sum().clamp_min(1e-300)) if ov.numel() else 0.0
    rms = float((ov**2).mean().sqrt()) if ov.numel() else 1.0
    rmse = float((err**2).mean().sqrt()) / max(rms, 1e-300) if ov.numel() else 0.0
    stats.update(cosine=cos, rel_l1=rel_l1, rmse=rmse, max_err=float(err.max()) if err.numel() else 0.0,
                 nonfinite_wrong=int(nonfinite.sum()),
                 limits={"cosine": tol.cosine, "rel_l1": tol.rel_l1, "rmse": tol.rmse})
    # an element may be as far off as the task's own reference is (k x its max error against the oracle):
    # a per-row scale puts one quantization step of a heavy-tailed row above the RMS-based cap, and fp32
    # and fp64 round a tie of x / scale differently (fake_quant_per_token on the H200, 2026-12-03)
    cap = max(QUANT_ELEMENT_K * tol.rmse * rms, tol.k * float(stats.get("native_err") or 0.0))
    stats["element_cap"] = cap
    typical_ok = True
    if native is not None and native.is_floating_point() and ov.numel():
        half = torch.finfo(native.dtype).eps >= torch.finfo(torch.float16).eps
        nd = native.double()[fin]  # the reference's own typical error is allowed too (k times it)
        units = half_typical_units(terms, int(ov.numel())) if half else 1.0
        if half and terms:
            stats["sum_terms"] = terms
        typical_cap = max(QUANT_TYPICAL * units * rms,
                          tol.k * _typical_abs((nd - ov).abs().nan_to_num_(0.0)))
        stats.update(typical_err=_typical_abs(err), typical_cap=typical_cap)
        typical_ok = stats["typical_err"] <= typical_cap
        if not typical_ok:
            stats["typical_exceeded"] = True
        if not half:  # the few elements past the typical quantile: rounding ties, not a share of rows
            tail_cap = QUANT_TAIL_K * typical_cap
            tail = int(torch.count_nonzero(err > tail_cap))
            allowed = max(QUANT_TAIL_MIN, QUANT_TAIL_SHARE * ov.numel(),
                          tol.k * int(torch.count_nonzero((nd - ov).abs() > tail_cap)))
            stats.update(tail=tail, tail_allowed=allowed)
            if tail > allowed:
                typical_ok = False
                stats.update(tail_exceeded=True, tail_cap=tail_cap)
    ok = cos >= tol.cosine and rel_l1 <= tol.rel_l1 and rmse <= tol.rmse and not nonfinite.any() \
        and not (err.numel() and float(err.max()) > cap) and typical_ok
    if ok:
        return Comparison(True, None, stats)
    # elementwise mask for localisation: errors well above the RMS error, and every one above the cap
    full = torch.where(torch.isfinite(o) & torch.isfinite(cd), (cd - o).abs(), torch.zeros_like(o))
    bad = nonfinite | (full > max(tol.rmse * rms * 3, 1e-300)) | (full > cap)
    if not typical_ok:  # errors everywhere (or a tail too wide): those above the typical (tail) cap
        bad = bad | (full > stats.get("tail_cap", stats["typical_cap"]))
    stats.update(wrong=int(bad.sum()), total=int(o.numel()))
    return Comparison(False, bad, stats)


def agree(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype, tol: Tolerance) -> bool:
    """Whether two runs' outputs agree up to rounding (the dtype bound)."""
    a, b = a.detach().cpu(), b.detach().cpu()
    if not a.is_floating_point():
        return torch.equal(a, b)
    atol, rtol = dtype_bound(dtype, tol)
    if tol.kind == "quant":
        atol, rtol = max(atol, 1e-3), max(rtol, 1e-2)
    if torch.equal(a, b):
        return True
    ad, bd = a.double(), b.double()
    close = (ad - bd).abs_() <= bd.abs().mul_(rtol).add_(atol)
    if bool(close.all()):
        return True
    return not bool((_nonfinite_mismatch(ad, bd) | (torch.isfinite(ad) & torch.isfinite(bd) & ~close)).any())


def compare_native(cand: torch.Tensor, native: torch.Tensor, tol: Tolerance, native_err: float = 0.0) -> Comparison:
    """Compare with the task-dtype reference where no float64 oracle was
    computed (a test planned with ``oracle="native"``, see
    :func:`kstrata.verify.plan.oracle_kind`).

    The derived bound is elementwise

        |cand - native| <= max(floor, k * native_err) + 2 * (atol_d + rtol_d * |native|)

    By the triangle inequality a candidate within ``atol_d + rtol_d |x|`` of
    the exact result ``x`` is within twice that of a reference that is itself
    within it, hence the factor 2; ``native_err`` is the caller's estimate of
    the reference's own max error at this shape (e.g. measured against the
    oracle at the largest shape that had one; 0 when unknown), so inexact
    references keep their proportionate allowance as under :func:`compare`.
    Non-finite values must match the reference's; ``exact`` and ``quant``
    policies are applied against the reference as under :func:`compare`.

    Parameters
    ----------
    cand:
        Candidate output, any device, the reference's shape.
    native:
        The reference's output in the task dtype.
    tol:
        The task's tolerance policy.
    native_err:
        Estimated max ``|native - exact|`` (absolute, >= 0).

    Returns
    -------
    Comparison
        ``stats["oracle"] == "native"``.
    """
    n = native.detach().cpu()
    if tol.kind == "oracle" and n.is_floating_point():
        atol, rtol = dtype_bound(n.dtype, tol)
        tol = tol.model_copy(update={"atol": 2 * atol, "rtol": 2 * rtol,
                                     "floor": max(tol.floor or 0.0, tol.k * max(native_err, 0.0))})
    c = compare(cand, n.double() if n.is_floating_point() else n, n, tol, scale_atol=False)
    c.stats["oracle"] = "native"
    return c
