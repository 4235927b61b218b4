"""The task's numerical domain: tests whose inputs the task's own reference
cannot handle in its dtype do not decide a verdict (issue #17, item 4).

A test is *outside the domain* when the reference, run in the task's dtype,
is itself wrong on it: non-finite where the float64 oracle is finite (``exp``
of the ``large`` draw overflowing fp32), or finite but outside the tolerance
of the oracle (catastrophic cancellation the task's dtype cannot represent).
Any correct implementation in that dtype may fail such a test the same way,
so failing it says nothing about the candidate; the judge records the reason
instead of a verdict-deciding comparison (case 22_overflow_domain_false_reject).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from kstrata.tasks.meta import Tolerance
from kstrata.verify.tolerance import dtype_bound


def outside_domain(refs: Sequence[torch.Tensor], oracles: Sequence[torch.Tensor], tol: Tolerance,
                   inputs_finite: bool = False) -> str | None:
    """Why a test lies outside the task's numerical domain, or ``None``.

    Parameters
    ----------
    refs:
        The reference's outputs in the task dtype (any device), one per output.
    oracles:
        The float64 oracle's outputs for the same inputs, same order and
        shapes (integer outputs: anything; they are never outside the domain).
    tol:
        The task's tolerance policy. Under ``oracle`` the native reference must
        satisfy ``|ref - oracle| <= atol_d + rtol_d * |oracle|`` (the dtype
        bound of :func:`kstrata.verify.tolerance.dtype_bound`) times the
        task's ``k``, plus its ``floor``: ``k`` is the factor by which a
        candidate may exceed the reference's own error, so a reference that
        misses the dtype bound by more than ``k`` computes something the
        dtype cannot represent (the margin keeps ordinary long reductions,
        whose fp32 error is ~sqrt(n) u, inside the domain).
        Under ``quant`` and ``exact`` only non-finite mismatches count.
    inputs_finite:
        Every floating input of the test is finite. Then a NaN or inf of the
        float64 oracle that the reference shares is, but for a pole met exactly
        (``1 / 0``), an overflow of the expression as written (``inf / inf`` of
        a textbook softmax, ``log(inf)`` of a textbook logsumexp on the
        ``offset`` or ``far`` draw), not a result: such elements are outside
        the domain (:func:`nonfinite_from_finite`), and a numerically stable
        candidate that is finite there is not judged on them. False (the
        default) for a draw that holds NaN/inf itself, whose propagation is
        the contract.

    Returns
    -------
    str | None
        ``None`` when the test decides the verdict; otherwise a reason to
        record (it names the output index and dtype only: no shape, element
        count or value, so it may be stored with a hidden test's evidence).

    Notes
    -----
    Non-finite oracle values are matched position by position: where the
    oracle is itself non-finite, the reference must hold the same value
    (``inf`` of the same sign, or ``nan``), else the test is outside.
    """
    for i, (r, o) in enumerate(zip(refs, oracles)):
        if not isinstance(r, torch.Tensor) or not r.is_floating_point() or r.numel() == 0:
            continue
        rd = r.detach().cpu().double()
        od = o.detach().cpu().double()
        of, rf = torch.isfinite(od), torch.isfinite(rd)
        overflow = int((of & ~rf).sum())
        if overflow:
            return (f"output {i}: the task's own {r.dtype} reference is non-finite where the float64 "
                    "oracle is finite (inputs outside the dtype's range for this task)")
        nf = ~of
        if bool(nf.any()):
            same = (torch.isnan(od) & torch.isnan(rd)) | (torch.isinf(od) & (rd == od))
            if not bool((same | of).all()):
                return (f"output {i}: the task's own {r.dtype} reference differs from the float64 "
                        "oracle's non-finite values")
            if inputs_finite and bool(nonfinite_from_finite(rd, od).any()):
                return (f"output {i}: the float64 oracle and the task's own {r.dtype} reference are non-finite "
                        "from finite inputs (the expression as written overflows float64 too): no result "
                        "to compare with there")
        if tol.kind != "oracle":
            continue
        atol, rtol = dtype_bound(r.dtype, tol)
        err = (rd - od).abs()
        bound = od.abs().mul_(rtol).add_(atol).mul_(tol.k).add_(tol.floor or 0.0)
        if not bool((err <= bound)[of].all()):
            return (f"output {i}: the task's own {r.dtype} reference is more than {tol.k:g} x the dtype "
                    "tolerance away from the float64 oracle: the inputs are outside the task's "
                    "numerical domain in this dtype")
    return None


def in_domain(r: torch.Tensor, o: torch.Tensor, tol: Tolerance, inputs_finite: bool = False,
              candidate: torch.Tensor | None = None) -> torch.Tensor | None:
    """Where one output is inside the task's numerical domain: a boolean mask of
    ``r``'s shape, true where the reference in its dtype is what the float64
    oracle says (finite where the oracle is finite, the same non-finite value
    where it is not and, under ``oracle``, within ``k`` x the dtype bound plus
    the floor, as :func:`outside_domain` judges a whole test). ``None`` for a
    non-floating output or mismatched shapes (no mask: compare everything).

    A test outside the domain at some elements still decides the verdict at
    the others: a candidate that is wrong where the reference is right is
    wrong (red-team case 35: one global max for the softmax shift overflowed
    rows that the fp32 reference computed finitely, and the whole test was
    excused). With ``inputs_finite``, the elements where the oracle and the
    reference are both non-finite are outside (:func:`nonfinite_from_finite`).

    With ``candidate`` (the candidate's output, same shape): where the
    reference overflows at some element of this output (non-finite where the
    oracle is finite), the draw reaches the edge of the dtype's range for this
    task, and an element where the candidate overflows instead (non-finite, the
    oracle finite) is outside too: which rows of such a draw overflow depends
    on the order of a reduction, not on its correctness (newcomer nc22: the
    fp32 row mean of a task's own reference overflowed in 52 rows of the
    ``far`` draw at 1e37, an equally correct reordered sum in 14 others). The
    candidate's finite elements are still compared, and a task whose
    reference never overflows on a draw (a stable softmax) excuses nothing:
    an ``exp`` without the max subtracted is still caught there.
    """
    if not (isinstance(r, torch.Tensor) and isinstance(o, torch.Tensor)) or not r.is_floating_point() \
            or r.shape != o.shape:
        return None
    rd = r.detach().cpu().double()
    od = o.detach().cpu().double()
    of, rf = torch.isfinite(od), torch.isfinite(rd)
    ok = of & rf
    ok |= ~of & ((torch.isnan(od) & torch.isnan(rd)) | (torch.isinf(od) & (rd == od)))
    if tol.kind == "oracle":
        atol, rtol = dtype_bound(r.dtype, tol)
        bound = od.abs().mul_(rtol).add_(atol).mul_(tol.k).add_(tol.floor or 0.0)
        ok &= ~of | ((rd - od).abs() <= bound)
    if inputs_finite:
        ok &= ~nonfinite_from_finite(rd, od)
    if isinstance(candidate, torch.Tensor) and candidate.shape == r.shape and bool((of & ~rf).any()):
        ok &= torch.isfinite(candidate.detach().cpu()) | ~of
    return ok


def nonfinite_from_finite(ref: torch.Tensor, oracle: torch.Tensor) -> torch.Tensor:
    """Where the float64 ``oracle`` and the task's native reference ``ref`` are
    both non-finite (NaN or inf; boolean mask of their common shape). Called
    only for a test whose inputs are all finite: there such a value is, but for
    a pole met exactly, an overflow of the expression as the task wrote it
    (``exp(x) / exp(x).sum()`` at x ~ 1000 gives ``inf / inf`` in float64 too,
    ``log(exp(x).sum())`` gives inf where the true value is about 1000), and a
    candidate computing it stably (finite) is as right as one that overflows
    like the reference (red-team case 22 variants: an honest max-subtracted
    softmax and logsumexp read incorrect on textbook tasks' ``offset`` draw).
    Where the reference is finite the oracle decides as before."""
    return ~torch.isfinite(oracle) & ~torch.isfinite(ref)


def inputs_finite(inputs: Sequence[object] | None) -> bool:
    """Whether every floating-point tensor among a test's ``inputs`` is finite
    (``False`` for ``None``: unknown inputs are not assumed finite)."""
    if inputs is None:
        return False
    return all(bool(torch.isfinite(x).all()) for x in inputs
               if isinstance(x, torch.Tensor) and (x.is_floating_point() or x.is_complex()))
