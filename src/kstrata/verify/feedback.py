"""Located feedback for an incorrect candidate, from public tests only.

Each item is ``{"kind", "level", "text", "data"}``; ``level`` is the IR level
the problem most likely belongs to (DESIGN.md). Kinds:

``wrong_share``     share of wrong elements and max error
``nonfinite``       NaN/Inf where the oracle is finite, first positions
``rows_cols``       which indices along each of the output's own dims hold the wrong elements
``blocks``          wrong 32x32 tiles of the (rows, cols) view
``tail_tile``       only the last partial tile along a dim is wrong (mask/padding bug)
``constant_ratio``  output = r x oracle for a constant r (a missing scale, e.g. 1/sqrt(d))
``offset_ratio``    output = r x oracle plus a per-column offset: a wrong scale under a right bias
                    (:mod:`kstrata.verify.offset_ratio`)
``shapes``          which public shapes pass and which fail (nominal vs boundary)
``distributions``   which input distributions fail (e.g. only ``shifted``: padding values)
``reduction_growth`` relative error grows with the reduction length (accumulation precision)
``race``            two runs on the same input differ (non-determinism, or state kept between calls)
``call_history``    the failing test passes on a candidate loaded afresh: state is kept between calls
``unwritten_memory`` they differ as the poison patterns do: memory never written reached the output
``parameters``      a parameter of ModelNew's drawn differently from Model's (:mod:`kstrata.verify.param_draws`)
``approximation``   the task's GELU computed with the other formula (:mod:`kstrata.verify.approx_hint`)
``layout``          a non-contiguous input the kernel reads as row-major (:mod:`kstrata.verify.layout_hint`)
``public_probe``    after a hidden failure: a public shape of the same kind (a size of 1, 3 or 13)
                    that fails too, with the items above for it, or that none does
``index_bound``     each wrong row's largest error at the index an integer input gives (:mod:`kstrata.verify.index_hint`)
``reproduce``       a hidden failure revealed by ``--show-hidden``: Python lines that draw its inputs
                    (:mod:`kstrata.verify.reproduce`)
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from kstrata.verify.approx_hint import gelu_formula_hint
from kstrata.verify.draw_direction import direction_item
from kstrata.verify.index_hint import index_hint
from kstrata.verify.layout_hint import layout_hint
from kstrata.verify.param_draws import differing
from kstrata.verify.row_groups import row_groups_item
from kstrata.verify.offset_ratio import offset_ratio_item
from kstrata.verify.size_ratio import MATCH_REL, size_ratio_hint
from kstrata.verify.swap_hint import swapped_operands_hint

if TYPE_CHECKING:
    from kstrata.verify.plan import TestCase
    from kstrata.verify.runner import Context, Failure, ShapeRun

TILES = (16, 32, 64, 128, 256, 512, 1024)


#: where a backend poisons more than allocations, what else the unwritten_memory item names (red-team rt86:
#: the interpreter's masked-out lanes of a load without ``other``, :mod:`kstrata.backends.triton.masked_other`)
MASKED_OTHER = {"triton-interp": "; on triton-interp also the masked-out lanes of a tl.load without other= (undefined "
                                 "on a GPU, zeros in the interpreter, the poison here): give other= the value the "
                                 "reduction ignores (0 for a sum, -inf for a max) or drop the lanes with tl.where"}


def item(kind: str, level: str, text: str, **data: Any) -> dict[str, Any]:
    """One feedback item."""
    return {"kind": kind, "level": level, "text": text, "data": data}


def _ranges(idx: list[int], limit: int = 6) -> str:
    """[0,1,2,5,7,8] -> '0-2, 5, 7-8'."""
    out, start, prev = [], None, None
    for i in idx:
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            out.append(f"{start}-{prev}" if prev != start else f"{start}")
            start = prev = i
    if start is not None:
        out.append(f"{start}-{prev}" if prev != start else f"{start}")
    return ", ".join(out[:limit]) + (f", ... ({len(out)} runs)" if len(out) > limit else "")


def _tail_tiles(wrong: list[int], n: int) -> list[int]:
    """Every tile size b (of :data:`TILES`, b < n, n % b != 0) such that every
    wrong index lies in the last partial tile [n - n % b, n). Several sizes can
    leave the same tail (77 = 4 x 16 + 13 = 1 x 64 + 13); the outputs cannot
    tell them apart, so all are named."""
    if not wrong or len(wrong) == n:
        return []
    return [b for b in TILES if n % b and n > b and min(wrong) >= n - n % b]


def _tail_item(dim: str, wrong: list[int], n: int, tiles: list[int]) -> dict[str, Any]:
    """The ``tail_tile`` item: the wrong indices along ``dim`` (size ``n``) lie in
    the last partial tile of each block size in ``tiles`` (:func:`_tail_tiles`).
    It names exactly the wrong indices: all of a tile's tail (a tail block
    skipped), or only some of it (the tile was written, a few of its elements
    wrong: an off-by-one bound or mask, newcomer nc11 was told 64-76 where only
    76 was wrong)."""
    s = "" if len(wrong) == 1 else "s"
    suffix = wrong == list(range(n - len(wrong), n))  # the last len(wrong) indices, none skipped
    where = ((f"the last {len(wrong)} elements" if s else "the last element") if suffix
             else f"{len(wrong)} element{s}") + \
        f" along the {dim} dimension (ind{'ices' if s else 'ex'} {_ranges(wrong)}, of {n})"
    exact = [b for b in tiles if suffix and n % b == len(wrong)]
    data = {"dim": dim, "size": n, "tile": tiles[-1], "tiles": tiles, "wrong": wrong[:64], "exact": bool(exact)}
    if exact:  # the whole tail of those blocks: the tail block skipped or mis-masked
        ways = " = ".join(f"{n // b} x {b} + {n % b}" for b in reversed(exact))
        return item("tail_tile", "source",
                    f"only {where} {'are' if s else 'is'} wrong: the last partial tile of a block of "
                    f"{' or '.join(map(str, reversed(exact)))} ({n} = {ways}); check the loop bound and mask "
                    "of the tail block", **data)
    inner = min(tiles, key=lambda b: (n % b, -b))  # the shortest tail holding them
    ways = " = ".join(f"{n // b} x {b} + {n % b}" for b in reversed(tiles))
    likely = ("an off-by-one bound or mask at the end (`<=` for `<`, `D - 1` for `D`)" if suffix
              else "a mask or offset wrong for some lanes of the tail")
    return item("tail_tile", "source",
                f"only {where} {'are' if s else 'is'} wrong, inside the last partial tile of a block of "
                f"{' or '.join(map(str, reversed(tiles)))} ({n} = {ways}; that tile is indices "
                f"{n - n % inner}-{n - 1}), whose other elements are right: likely {likely}", **data)


#: What both parameter hints tell of how kstrata builds the two models.
SAME_SEED = ("kstrata constructs Model and ModelNew after the same seed (torch.manual_seed), so ModelNew must "
             "create its parameters with the same calls, in the same order, as Model")


def _params_of_size(model: torch.nn.Module, n: int) -> list[tuple[str, torch.Tensor]]:
    """The Model's parameters whose last dimension is ``n`` (name, detached tensor)."""
    return [(k, v.detach()) for k, v in model.named_parameters() if v.dim() >= 1 and v.shape[-1] == n]


def parameter_hint(model: torch.nn.Module, cand: torch.Tensor, oracle: torch.Tensor) -> dict | None:
    """A hint when the output is off by a factor per column (last dim) that is
    constant down each column and differs between columns: the signature of a
    parameter of that size drawn differently from the Model's (``ones``
    instead of ``1 + 0.1 * randn``). Names the Model's parameters of that
    size and, for a 1-D one, what ModelNew's apparently holds; ``None``
    when the pattern is absent, when the Model has no parameter of that
    size, or when the evidence is a few columns off or left 0 rather than
    another draw (:func:`_parameter_like`)."""
    if cand.dim() < 2 or cand.shape != oracle.shape or not cand.is_floating_point():
        return None
    n = cand.shape[-1]
    c, o = cand.double().reshape(-1, n), oracle.double().reshape(-1, n)
    if c.shape[0] < 2 or not torch.isfinite(c).all():
        return None
    ok = o.abs() > 1e-3 * max(float(o.abs().max()), 1e-30)
    if not bool(ok.any(0).all()):
        return None
    ratio = torch.where(ok, c / torch.where(ok, o, torch.ones_like(o)), torch.full_like(o, float("nan")))
    col = torch.nanmedian(ratio, dim=0).values
    spread = torch.where(ok, (ratio - col).abs(), torch.zeros_like(o)).amax(0)
    if bool((spread > 1e-4 * col.abs() + 1e-9).any()):
        return _offset_hint(model, c, o)  # not a factor per column: an offset per column?
    if float((col - col.mean()).abs().max()) <= 1e-3 * abs(float(col.mean())):
        return None  # one factor for all: not a per-column parameter
    named = _params_of_size(model, n)
    if not named or not _parameter_like(col, 1.0):
        return None  # no parameter of that size, or a few columns zero or off (a tail: newcomer nc21)
    text = (f"the output is off by a different factor in each column (last dim, size {n}), constant down "
            f"each column: a parameter of that size differs from the Model's. {SAME_SEED}")
    data: dict[str, Any] = {"size": n, "parameters": [k for k, _ in named]}
    k, v = named[0]
    text += f"; Model's parameters of that size: {', '.join(f'{name} {tuple(t.shape)}' for name, t in named)}"
    if v.dim() == 1:
        implied = v.double() * col
        spread_v = float(implied.std()) if implied.numel() > 1 else 0.0
        text += (f" ({k}: mean {float(v.double().mean()):.3g}, std {float(v.double().std()):.3g} in Model; "
                 + (f"ModelNew's looks like the constant {float(implied.mean()):.3g})"
                    if spread_v <= 1e-3 * abs(float(implied.mean())) + 1e-9
                    else f"ModelNew's has mean {float(implied.mean()):.3g}, std {spread_v:.3g})"))
    return item("parameters", "source", text, **data)


def _parameter_like(col: torch.Tensor, right: float) -> bool:
    """Whether per-column factors (``right`` = 1.0) or offsets (0.0, relative
    to the output's scale) ``col`` read as a parameter drawn differently:
    off in most columns (another draw moves every element) and never a
    factor of exactly 0 (a column left unwritten). A tail tile the kernel
    never wrote gives factor 1 everywhere but 0 in its few last columns
    (newcomer nc21: "a parameter of that size (33) differs" where no
    parameter had size 33)."""
    off = (col - right).abs() > 1e-4 * max(abs(right), 1e-3)
    if right != 0.0 and bool((col == 0).any()):
        return False
    return 2 * int(off.sum()) > col.numel()


def _offset_hint(model: torch.nn.Module, c: torch.Tensor, o: torch.Tensor) -> dict | None:
    """:func:`parameter_hint`'s other signature: the output (``c``, ``o``:
    float64, rows x last dim) is off by an offset per column, constant down
    each column and different between columns (a bias of that size drawn
    differently: ``zeros`` instead of ``0.1 * randn``); ``None`` when absent."""
    n = c.shape[-1]
    diff = c - o
    col = diff.median(dim=0).values
    scale = max(float(o.abs().max()), 1e-30)
    if float((diff - col).abs().max()) > 1e-5 * scale:
        return None  # not an offset per column
    if float((col - col.mean()).abs().max()) <= 1e-3 * scale:
        return None  # one offset for all (or none): not a per-column parameter
    named = _params_of_size(model, n)
    if not named or not _parameter_like(col / scale, 0.0) or bool(((c == 0) & (o != 0)).all(0).any()):
        return None  # no parameter of that size, a few columns off, or a column left 0 (unwritten)
    text = (f"the output is off by a different offset in each column (last dim, size {n}), constant down each "
            f"column: an additive parameter of that size (a bias) differs from the Model's. {SAME_SEED}")
    text += f"; Model's parameters of that size: {', '.join(f'{k} {tuple(t.shape)}' for k, t in named)}"
    return item("parameters", "source", text, size=n, parameters=[k for k, _ in named], form="offset")


def sign_hint(inputs: list[Any], bad: torch.Tensor) -> dict | None:
    """Where the wrong elements of an output are by the sign of the input of
    the same shape (an elementwise map read element for element): all where
    it is negative, positive or zero while the rest of the input has the
    others (newcomer nc14: a GELU wrong for negative inputs only was told
    which draws failed, not where). ``inputs``: the failing test's inputs;
    ``bad``: the output's wrong-element mask. ``None`` when no input has the
    output's shape or the wrong elements have no common sign, and when most
    elements of that sign are right: a branch or formula for one sign fails
    on most of them, while the larger outputs of a wrong per-row normalizer
    cross the tolerance first wherever the input is positive (newcomer nc26:
    1872 wrong elements, all at positive inputs, 4358 right ones there, were
    told to check the kernel's branch for positive inputs;
    tests/verify/cases/nc26_misleading_hints/softmax_chunked_bug.py)."""
    nbad = int(bad.sum())
    if nbad < 2:
        return None
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or tuple(x.shape) != tuple(bad.shape):
            continue
        x = x.detach().cpu().double()
        for word, where in (("negative", x < 0), ("positive", x > 0), ("exactly zero", x == 0)):
            in_bad = int((where & bad).sum())
            right = int((where & ~bad).sum())
            if in_bad == nbad and int(where.sum()) < x.numel() and right <= in_bad:
                share = int(where.sum()) / x.numel()
                return item("input_sign", "source",
                            f"every wrong element is where input {i} is {word} ({nbad} wrong; the input is {word} "
                            f"at {100 * share:.0f}% of its elements, {right} of those are right): check the "
                            f"kernel's branch or formula for {word} inputs", input=i, sign=word, wrong=nbad)
    return None



def _shifted_hint(run: Any, failure: Any) -> str:
    """The hint for a failure on the all-negative (``shifted``) draw alone: a
    reduction's padding leaking into a max/exp/sum where an output has fewer
    elements than the largest input (a row reduction), else what goes wrong
    with negative values elementwise (newcomer nc20: a GELU approximation's
    error was told about padding in a max/exp/sum)."""
    try:
        ins = [x for x in run.inputs(failure.test) if isinstance(x, torch.Tensor)]
        reduces = bool(ins) and any(o.numel() < max(x.numel() for x in ins) for o in failure.outputs
                                    if isinstance(o, torch.Tensor))
    except Exception:  # noqa: BLE001 - a hint only
        reduces = True
    if reduces:
        return " (all-negative inputs: a padding value such as other=0.0 leaking into a max/exp/sum?)"
    return (" (all-negative inputs: a sign-dependent branch, an approximation that loses accuracy for negative "
            "values, e.g. of erf/tanh/exp, or a max/clamp with 0 as its start?)")

def _draw_hint(draws: list[str], most: int = 2) -> str:
    """`` (large: the normal draw times 100 (overflow in exp or accumulators))``:
    what each of at most ``most`` failing draws tests, beside the failure
    (queue round 5: 'fails for inputs drawn large, offset' of an rmsnorm that
    squared in float16, and 'offset' of a one-pass variance, named the draws
    but not what they stress; that stood only in the task's list of draws)."""
    from kstrata.tasks.meta import DRAW_SUMMARY

    known = [d for d in draws if d in DRAW_SUMMARY]
    if not known or len(draws) > most:
        return ""
    return " (" + "; ".join(f"{d}: {DRAW_SUMMARY[d]}" for d in known) + ")"


#: Wrong elements whose expected and actual values :func:`values_item` lists.
VALUE_SAMPLES = 5


def values_item(c: torch.Tensor, o: torch.Tensor, bad: torch.Tensor) -> dict[str, Any]:
    """The first :data:`VALUE_SAMPLES` wrong elements (row-major order) with
    the expected (float64 oracle) and the actual value, and, when every wrong
    element got one value or was off by one amount, that value or amount
    (queue-model round of 2026-12-04: an int8 kernel clamping to -127 was told
    where it was wrong, not that the reference held -128 there). ``c``, ``o``:
    float64 output and oracle; ``bad``: the wrong-element mask."""
    idx = bad.nonzero()[:VALUE_SAMPLES]
    shown = [(tuple(int(i) for i in p), float(o[tuple(p)]), float(c[tuple(p)])) for p in idx]
    text = "first wrong elements (index: expected -> got): " + "; ".join(
        f"{list(p) if len(p) > 1 else p[0]}: {e:.6g} -> {g:.6g}" for p, e, g in shown)
    got, want = c[bad], o[bad]
    fin = torch.isfinite(got) & torch.isfinite(want)
    text += _rounding_direction(got, want) if bool(fin.all()) else ""
    if got.numel() > 1 and bool(fin.all()):
        if bool((got == 0).all()):  # -0.0 and 0.0 alike: "is -0" read as a sign bug (queue round rt75)
            text += ("; every wrong element is 0: the result zeroed, e.g. a factor that came out 0 (1 / sqrt(inf) "
                     "from a sum of squares that overflowed a narrow accumulator such as float16, max 65504) or "
                     "a path that stores zeros")
        elif bool((got == got[0]).all()):
            text += f"; every wrong element is {float(got[0]):.6g}"
        elif bool(((got - want) == (got - want)[0]).all()):
            text += f"; every wrong element is off by {float(got[0] - want[0]):+.6g}"
        elif _same(got - want):
            text += (f"; every wrong element is off by about {float((got - want).median()):+.6g}, the same "
                     "amount up to rounding (an extra or a missing term in a sum or mean, such as padded "
                     "lanes counted?)")
        else:
            text += _row_factor(c, o, bad) or _row_offset(c, o, bad) or _one_sided(got, want)
    return item("values", "source", text, samples=[[list(p), e, g] for p, e, g in shown])


#: the fewest wrong elements whose errors, all of one sign, are named as one-sided
ONE_SIDED_MIN = 3


def _one_sided(got: torch.Tensor, want: torch.Tensor) -> str:
    """``"; every wrong element is above (below) its expected value ..."``
    when every one of at least :data:`ONE_SIDED_MIN` wrong elements (``got``
    vs the oracle's ``want``, finite float64) errs in one direction by
    differing amounts; ``""`` otherwise. Queue round rt72: a cross-entropy
    whose tail mask dropped each row's last class gave every per-row loss too
    low, one that counted padded lanes (other=0.0 through exp) every loss too
    high, by amounts that differ per row (so no offset item applies); the
    sign had to be read off the values."""
    if got.numel() < ONE_SIDED_MIN:
        return ""
    d = got - want
    for side, sel in (("above", d > 0), ("below", d < 0)):
        if bool(sel.all()):
            return (f"; every wrong element is {side} its expected value ({got.numel()} of {got.numel()}, by "
                    "differing amounts): a one-sided, systematic error, not rounding noise (a term counted that "
                    "should not be, or one left out: padded lanes in a sum or max, a dropped tail element?)")
    return ""


def _per_row_spread(values: torch.Tensor, bad: torch.Tensor) \
        -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """Per row (the last dimension; outputs of 2 or more dimensions whose rows
    hold 2 or more elements) of ``values`` (float64, the output's shape), the
    least and greatest value over the wrong elements (``bad``) of each row
    holding one, and their midpoint: ``(hit, lo, hi, mid)``, ``hit`` the
    boolean mask over rows, the others one entry per hit row. None when the
    output has no rows, no element is wrong, or a hit row holds a single wrong
    element (one element fits any per-row term). Shared by the per-row
    additive and multiplicative hints."""
    if values.dim() < 2 or values.shape[-1] < 2:
        return None
    n = values.shape[-1]
    rows, flat = bad.reshape(-1, n), values.reshape(-1, n)
    hit = rows.any(dim=1)
    if not bool(hit.any()) or bool((rows[hit].sum(dim=1) < 2).any()):
        return None
    lo = torch.where(rows, flat, torch.full_like(flat, math.inf)).min(dim=1).values[hit]
    hi = torch.where(rows, flat, torch.full_like(flat, -math.inf)).max(dim=1).values[hit]
    return hit, lo, hi, (lo + hi) / 2


def _row_offset(c: torch.Tensor, o: torch.Tensor, bad: torch.Tensor) -> str:
    """``"; within each row ... off by one amount"``: when the output has rows
    (2 or more dimensions, a row being the last one) and within every row
    holding a wrong element (at least 2 of them) each wrong element is off by
    one amount of that row (up to :data:`SAME_SPREAD` of it), the amounts differing
    between rows; else ``""``. A per-row additive term that is wrong looks so: a
    log_softmax whose log-sum-exp counted padded lanes (exp(0) = 1 each) is
    its expected value minus one amount per row (queue round rt69: it had to be
    read off the values)."""
    spread = _per_row_spread(c - o, bad)
    if spread is None:
        return ""
    hit, lo, hi, mid = spread
    if not bool(torch.isfinite(mid).all()) or not bool(((hi - lo) <= SAME_SPREAD * mid.abs()).all()) \
            or bool((mid == 0).any()):
        return ""
    offsets = list(zip(hit.nonzero().flatten().tolist(), mid.tolist()))
    shown = ", ".join(f"row {r}: {d:+.4g}" for r, d in offsets[:3])
    return (f"; within each row the wrong elements are off by one amount of that row ({shown}): a per-row "
            "additive term is wrong (a log-sum-exp, max or mean over the row that counts padded lanes, e.g. "
            "masked loads with other=0.0 whose exp is 1? a row's shift taken from the wrong row?)")


def _rounding_direction(got: torch.Tensor, want: torch.Tensor) -> str:
    """A sentence when every wrong element (``got`` vs the oracle's ``want``,
    finite float64) is integer-valued and one step off in one direction from
    zero: toward zero is a cast that truncates where the reference rounds;
    away from zero (never from 0 itself alone) is ties rounded away from zero
    where the reference rounds half to even (queue round rt66: an int8 cast
    that truncated was told only where it was wrong). '' otherwise."""
    if not got.numel() or not bool((got == got.round()).all() and (want == want.round()).all()) \
            or not bool(((got - want).abs() == 1).all()):
        return ""
    toward = got.abs() < want.abs()
    if bool(toward.all()):
        return ("; every wrong element is one step toward zero from the expected value: a cast that truncates "
                "(.to(int8), (int)x, tl's .to(tl.int8)) where the reference rounds (half to even, as "
                "torch.round): round first, then cast")
    if bool((~toward).all()) and bool((want != 0).any()):
        return ("; every wrong element is one step away from zero: ties rounded away from zero (C's round, "
                "libdevice.round, floor(|x| + 0.5)) where the reference rounds half to even (torch.round, "
                "rint)?")
    return ""


#: spread, relative to their size, within which values read as "the same" in :func:`values_item`
SAME_SPREAD = 1e-3


def _same(x: torch.Tensor) -> bool:
    """Whether the values of ``x`` (finite, float64) are one non-zero amount up to rounding."""
    mid = float(x.median())
    return mid != 0 and float((x - mid).abs().max()) <= SAME_SPREAD * abs(mid)


def _row_factor(c: torch.Tensor, o: torch.Tensor, bad: torch.Tensor) -> str:
    """``"; within each row ..."``: when the output has rows (2 or more
    dimensions, a row being the last one) and within every row holding a wrong
    element each wrong element is its expected value times one factor of that
    row (not 1; at least 2 wrong elements per such row), the factors of the
    first rows; else ``""``. A wrong per-row normalizer (softmax's sum or a
    norm's scale counting padded lanes) looks so (queue round 5: a softmax
    that sent other=0.0 padding through exp read 0.00200087 -> 0.00136189,
    0.00434466 -> 0.00295719, ... with nothing saying that every element of
    the row was 0.681 of its value), and so does an epsilon in the wrong place
    (queue round rt56: rsqrt(mean(x^2)) + eps scaled near_zero rows by ~1.4,
    and the hint named only padded lanes)."""
    if bool((bad & (o == 0)).any()):
        return ""
    spread = _per_row_spread(c / torch.where(bad, o, torch.ones_like(o)), bad)
    if spread is None:
        return ""
    hit, lo, hi, mid = spread
    # one factor a row (its wrong elements' ratios within SAME_SPREAD), on one side of 1 (beyond its own
    # spread): a row normalizer off by a tail's share is ~1.001 (newcomer nc17: an l2norm dropping a row's
    # last element said only "60.93% wrong"), noise around 1 is not a factor
    if not bool(((hi - lo) <= SAME_SPREAD * mid.abs()).all()) or bool(((mid - 1).abs() <= (hi - lo)).any()):
        return ""
    factors = list(zip(hit.nonzero().flatten().tolist(), mid.tolist()))
    shown = ", ".join(f"row {r}: x{f:.4g}" if abs(f - 1) > 1e-3 else f"row {r}: x{f:.7g}" for r, f in factors[:3])
    return (f"; within each row the wrong elements are their expected values times one factor of that row "
            f"({shown}): a per-row normalizer or scale is wrong (a sum, max or count over the row that "
            "includes padded lanes? a row sum accumulated in a narrower type than float32, e.g. float16? "
            "an epsilon added in the wrong place, e.g. outside a square root?)")


def _wrong_along_dims(bad: torch.Tensor) -> dict[int, list[int]]:
    """Per dimension of the output larger than 1 (every dimension when none
    is), the indices along it that hold a wrong element."""
    dims = [d for d in range(bad.dim()) if bad.shape[d] > 1] or list(range(bad.dim()))
    return {d: bad.any(dim=tuple(e for e in range(bad.dim()) if e != d)).nonzero().flatten().tolist()
            if bad.dim() > 1 else bad.nonzero().flatten().tolist() for d in dims}


def _name_dims(shape: tuple[int, ...], per_dim: dict[int, list[int]]) -> str:
    """Where the wrong elements are, named by the output's own dimensions
    (a reduction's output of shape (B, 1) has no columns to speak of)."""
    parts = [f"dim {d} (size {shape[d]}): {_ranges(idx)}" for d, idx in per_dim.items()]
    return f"wrong elements of the output (shape {tuple(shape)}) at indices along " + "; ".join(parts)


def describe_tensor(cand: torch.Tensor, oracle: torch.Tensor, bad: torch.Tensor, stats: dict,
                    inputs: Sequence[Any] = ()) -> list[dict]:
    """Items locating the wrong elements of one output (``inputs``: the test's, where known: an item
    whose pattern the inputs' rows explain is left out, :func:`kstrata.verify.row_groups.row_groups_item`)."""
    items = []
    c, o = cand.double(), oracle.double()
    left_out = int(stats.get("outside_domain") or 0)  # elements the task's domain excuses (the reference fails)
    total, nbad = bad.numel() - left_out, int(bad.sum())
    max_err = stats.get("max_err")
    same = tuple(bad.shape) == tuple(c.shape) == tuple(o.shape)  # a mask of another shape locates by index only
    if (not isinstance(max_err, (int, float)) or math.isnan(max_err)) and same:  # integer outputs: none computed
        both = bad & torch.isfinite(c) & torch.isfinite(o)
        max_err = float((c - o).abs()[both].max()) if bool(both.any()) else float("nan")
    items.append(item("wrong_share", "source",
                      f"{nbad} of {total} elements wrong ({100 * nbad / max(total, 1):.2f}%), "
                      f"max error {float('nan') if max_err is None else max_err:.3g}"
                      + (f" over the finite ones ({stats['nonfinite_wrong']} NaN/Inf where the oracle is finite)"
                         if stats.get("nonfinite_wrong") else "")
                      + (f"; {left_out} elements where the task's own reference is wrong too are not counted"
                         if left_out else ""),
                      wrong=nbad, total=total, share=nbad / max(total, 1), max_err=stats.get("max_err")))
    if nbad and same:
        items.append(values_item(c, o, bad))
    nonfin = torch.isfinite(o) & ~torch.isfinite(c)
    if nonfin.any():
        pos = [list(map(int, p)) for p in nonfin.nonzero()[:5]]
        items.append(item("nonfinite", "source",
                          f"{int(nonfin.sum())} NaN/Inf outputs where the expected value is finite, "
                          f"first at {pos}", count=int(nonfin.sum()), first=pos))
    if bad.dim() >= 1 and bad.numel():
        n_cols = bad.shape[-1]
        view = bad.reshape(-1, n_cols)
        rows = view.any(1).nonzero().flatten().tolist()
        cols = view.any(0).nonzero().flatten().tolist()
        per_dim = _wrong_along_dims(bad)
        items.append(item("rows_cols", "source", _name_dims(tuple(bad.shape), per_dim),
                          rows=rows[:64], cols=cols[:64], n_rows=view.shape[0], n_cols=n_cols,
                          shape=list(bad.shape), dims={str(d): idx[:64] for d, idx in per_dim.items()}))
        groups = row_groups_item(c, o, bad, inputs) if same else None
        if groups is not None:
            items.append(groups)
        edge = [r for r in rows if r in (0, view.shape[0] - 1)]
        if nonfin.any() and rows and edge == rows and bad.dim() > 1:  # a 1-D output is one "row"
            where = "last" if rows == [view.shape[0] - 1] else "first" if rows == [0] else "first and last"
            items.append(item("edge_read", "source",
                              f"the non-finite outputs are in the {where} row only: the memory just past the "
                              "end and before the start of every input is filled with NaN and +-1e30 while the "
                              "candidate runs, so a kernel that reads outside an input (a tile or window "
                              "without a bounds mask, a row pointer off by one) gets them; check the bounds of "
                              "every load on the edge rows", rows=rows))
        for dim, idx, n in (("last", cols, n_cols), ("row", rows, view.shape[0])):
            bs = _tail_tiles(idx, n)
            if bs:
                items.append(_tail_item(dim, idx, n, bs))
                break
        if view.shape[0] > 1 and n_cols > 1:
            t = 32
            tiles = torch.nn.functional.pad(view.float(), (0, -n_cols % t, 0, -view.shape[0] % t))
            per = tiles.reshape(tiles.shape[0] // t, t, tiles.shape[1] // t, t).sum((1, 3))
            wrong_tiles = [list(map(int, p)) for p in per.nonzero()[:8]]
            items.append(item("blocks", "schedule",
                              f"{int((per > 0).sum())} of {per.numel()} 32x32 tiles hold wrong elements; "
                              f"first {wrong_tiles}", tiles=wrong_tiles, tile=t))
    cos = stats.get("cosine")
    if isinstance(cos, float) and cos < UNRELATED_COSINE:  # rt82: told "computed on fewer bits" at cosine -0.06
        items.append(item("unrelated_output", "source",
                          f"cosine similarity with the expected output is {cos:.3g} (the quant policy passes 0.95 "
                          "and more): far beyond any rounding, so this is another computation, not the same one "
                          "on fewer bits: wrong operands, indices or element order (e.g. the two values of a "
                          "packed byte taken in the other order, a scale of another group or row)", cosine=cos))
    axis = axis_factors(c, o) if nbad and same else None
    if axis is not None:
        items.append(axis)
    fin = torch.isfinite(c) & torch.isfinite(o) & (o.abs() > 1e-6 * max(float(o.abs().max()), 1e-30))
    if fin.sum() >= 4:
        ratio = c[fin] / o[fin]
        r = float(ratio.median())
        spread = float((ratio - r).abs().max())
        # a ratio nearer 1 counts where its spread is a small share of its distance from 1 (newcomer nc27:
        # sqrt(511/512) = 0.99902, an unbiased variance at D = 512, was under the 1e-3 bar)
        if abs(r) > 1e-12 and spread <= 1e-3 * abs(r) and (abs(r - 1) > 1e-3 or
                                                           1e-5 < abs(r - 1) and spread <= 0.05 * abs(r - 1)):
            sizes = [n for x in (c, *inputs) if isinstance(x, torch.Tensor) for n in x.shape]
            hint = size_ratio_hint(r, sizes) if spread <= MATCH_REL * abs(r) else ""
            inv2 = (1 / r) ** 2
            if not hint and r > 1 and abs(r**2 - round(r**2)) < 1e-3 * r**2:
                hint = f" (r^2 = {round(r**2)}: a missing 1/sqrt({round(r**2)}) scale?)"
            elif not hint and r < 1 and abs(inv2 - round(inv2)) < 1e-3 * inv2:
                hint = f" (1/r^2 = {round(inv2)}: an extra 1/sqrt({round(inv2)})?)"
            items.append(item("constant_ratio", "graph",
                              f"output = {r:.6g} x expected everywhere{hint}: a missing or extra scale factor",
                              ratio=r))
    if nbad and same and not any(i["kind"] == "constant_ratio" for i in items):
        shifted = offset_ratio_item(c, o, [n for x in (c, *inputs) if isinstance(x, torch.Tensor) for n in x.shape])
        if shifted is not None:  # the scale under a right bias (newcomer nc27: LayerNorm's n - 1 variance)
            items.append(shifted)
    return items


#: below this cosine similarity (quant policy) an output is another computation, not a rounding of the right
#: one: a W8A8 GEMM on int6 activations kept 0.95 and more (red-team rt67), a w4a16 GEMV with its nibbles in
#: the other order read -0.06 (queue round rt82)
UNRELATED_COSINE = 0.8


#: how far (in log of the ratio) the candidate/expected ratios may stray from a row factor times a column
#: factor, and how much the factors must vary, for :func:`axis_factors` to name them
AXIS_FIT = 1e-3


def axis_factors(c: torch.Tensor, o: torch.Tensor) -> dict[str, Any] | None:
    """An item when the candidate's output ``c`` over the expected ``o``
    (float64, same shape, 2 or more dimensions: rows are all but the last) is
    one factor per row times one factor per column, both varying: a scale or
    normalizer applied along the wrong axis (a per-column scale indexed by the
    row, or the reverse) makes ``c[i, j] = o[i, j] * s[i] / s[j]``, which no
    other hint named (queue rounds rt66/rt69, newcomer nc23: a dequantized
    output with its per-channel scale on the wrong axis read only as wrong
    values). Only elements where both are finite, non-zero and of one sign are
    read; at least 2 rows and 2 columns of them. ``None`` otherwise, and when
    the columns' factor is constant (a per-row factor, which
    :func:`_row_factor` tells) or the rows' is (a per-column one, told here)."""
    if c.dim() < 2 or c.shape != o.shape or c.shape[-1] < 2:
        return None
    n = c.shape[-1]
    got, want = c.reshape(-1, n), o.reshape(-1, n)
    if got.shape[0] < 2:
        return None
    ok = torch.isfinite(got) & torch.isfinite(want) & (want != 0) & (got != 0) & ((got > 0) == (want > 0))
    if not bool(ok.all()):  # a partial view would need a masked fit: only whole outputs are read
        return None
    lr = torch.log(got / want)
    row = lr.mean(dim=1, keepdim=True)
    col = lr.mean(dim=0, keepdim=True) - lr.mean()
    if float((lr - row - col).abs().max()) > AXIS_FIT:
        return None
    row_spread = float(row.max() - row.min())
    col_spread = float(col.max() - col.min())
    if col_spread <= AXIS_FIT:
        return None  # one factor per row: _row_factor's sentence
    fr, fc = torch.exp(row.flatten()), torch.exp(col.flatten())
    cols = ", ".join(f"column {j}: x{float(fc[j]):.4g}" for j in range(min(3, n)))
    if row_spread <= AXIS_FIT:
        return item("axis_factor", "source",
                    f"every element of a column is its expected value times one factor of that column ({cols}, "
                    f"the same in every row): a per-column scale or weight is wrong (which parameter has "
                    f"{n} entries? its values or its indexing?)", axis="column")
    rows = ", ".join(f"row {i}: x{float(fr[i]):.4g}" for i in range(min(3, got.shape[0])))
    return item("axis_factor", "source",
                f"output / expected is one factor per row times one factor per column ({rows}; {cols}): "
                "a scale or normalizer applied along the wrong axis (a per-column scale indexed by the row, "
                "or a per-row one by the column: s[i] where the reference has s[j])?", axis="both")


def _shapes_text(shapes: list[dict[str, int]]) -> str:
    """Shapes in the prompt's words, ``B=8, D=512; B=5, D=77`` (queue round rt56: the item printed
    Python reprs, ``[{'B': 8, 'D': 512}]``)."""
    return "; ".join(", ".join(f"{k}={v}" for k, v in s.items()) for s in shapes)


#: the block size whose multiples :func:`_remainder_note` tells from sizes that leave a remainder
REMAINDER_BLOCK = 16


def _remainder_note(passing: list[dict[str, int]], failing: list[dict[str, int]]) -> str:
    """``"; D=77 leaves a remainder ..."``: for each size variable whose value
    in every passing shape is a multiple of :data:`REMAINDER_BLOCK` (16, so of
    every smaller block too) while some failing shape's is not, a sentence
    naming that failing size as a full count of blocks plus a remainder;
    ``""`` when none. Queue round rt75: a fused add + LayerNorm whose chunk
    loop ran ``d // 16`` chunks (the tail dropped) passed at D=512 and failed
    at D=77, every element wrong, and the shapes item left the remainder to
    the reader."""
    notes = []
    for name in failing[0]:
        ok = [s[name] for s in passing if name in s]
        bad = sorted({s[name] for s in failing if name in s and s[name] % REMAINDER_BLOCK})
        if ok and bad and all(v % REMAINDER_BLOCK == 0 for v in ok):
            n = bad[0]
            ways = " = ".join(f"{n // b} x {b} + {n % b}" for b in (64, 16) if n > b and n % b)
            # newcomer nc28: a kernel with BLOCK=256 read '77 = 1 x 64 + 13' as a guess at its block
            big = 1 << max(7, n.bit_length())
            ways += f"; and less than one block of {big} or more" if ways else ""
            what = f"leaves a remainder ({ways})" if ways else f"is less than one block of {REMAINDER_BLOCK}"
            notes.append(f"{name}={n} {what} where every passing {name} "
                         f"({', '.join(map(str, sorted(set(ok))))}) is a multiple of {REMAINDER_BLOCK}")
    if not notes:
        return ""
    return ("; " + "; ".join(notes) + ": the partial last chunk, tile or split is mishandled (a chunk count "
            "n // BLOCK that drops the rest, a bound or mask that is off, a padded lane counted in a sum)")


def _probe(run: "ShapeRun", test: "TestCase") -> tuple[bool, float]:
    """(passes, max relative error) of one extra public test; candidate errors count as fail."""
    return _probe_blind(run, test)[:2]


#: How :func:`blind`'s answers read in a ``distributions`` item.
_BLIND_WORDS = {"zero": "all zero (within the tolerance)",
                "constant": "one value over all its elements (within the tolerance)"}


def blind(oracles: list[Any], refs: list[Any], tol: Any) -> str | None:
    """What a test whose every output an input-independent fake matches
    checks: ``"zero"`` when an all-zero output passes it against its oracle,
    ``"constant"`` when one value everywhere (the oracle's mean) does, else
    ``None`` (newcomer nc21: the ``far`` draw moved gated_sum's gate to
    -1e4 and beyond, sigmoid gave exactly 0, every oracle element was 0, and
    a kernel with an unwritten tail "passed far"). A test whose every output
    is a single number is never ``"constant"``: any one number is "one value
    throughout", so its oracle's mean is the right answer itself, not an
    input-independent fake (newcomer nc23: a row dot at B=1 had 103 passing
    tests told as no evidence, "e.g. a draw that saturates a sigmoid").
    ``oracles``/``refs``: the test's float64 oracle and reference outputs;
    ``tol``: the task's policy."""
    from kstrata.verify.tolerance import compare

    pairs = [(o.detach().cpu(), r.detach().cpu()) for o, r in zip(oracles, refs)
             if isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor) and o.shape == r.shape]
    if not pairs or len(pairs) != len(refs) or any(not r.is_floating_point() or r.numel() == 0 for _, r in pairs):
        return None
    if all(compare(torch.zeros_like(r), o, r, tol).ok for o, r in pairs):
        return "zero"
    def filled(o: torch.Tensor, r: torch.Tensor) -> torch.Tensor | None:
        mean = float(o.double().mean())  # an oracle with inf, or a mean past the output dtype's range: no constant
        return torch.full_like(r, mean) if abs(mean) <= torch.finfo(r.dtype).max else None

    if all(r.numel() == 1 for _, r in pairs):
        # one number per output: "constant" only where it is a value a fake would write without the inputs
        # (softmax over one element is 1 whatever the input: rt64's probe at D = 1); a row dot's sum is not
        return "constant" if all(float(o.double().abs().reshape(-1)[0]) in (0.0, 1.0) for o, _ in pairs) else None
    fills = [filled(o, r) for o, r in pairs]
    if all(f is not None and compare(f, o, r, tol).ok for f, (o, r) in zip(fills, pairs)):
        return "constant"
    return None


def _probe_blind(run: "ShapeRun", test: "TestCase") -> tuple[bool, float, str | None]:
    """:func:`_probe`, and :func:`blind` of the test's oracle: a pass of a
    test that a zero or constant output passes too is no evidence."""
    return _probe_failure(run, test)[:3]


def _probe_failure(run: "ShapeRun", test: "TestCase") -> tuple[bool, float, str | None, "Failure | None"]:
    """:func:`_probe_blind`, and the test's failure (None where it passes or the candidate errs)."""
    from kstrata.verify.runner import POISON_PATTERNS, Stop

    try:  # run_test's steps, keeping the oracle (a public test: no partial change)
        pristine, refs, oracles = run.prepare(test)
        out1, out2 = run.calls(pristine, test, refs, POISON_PATTERNS)
        f = run.judge(test, refs, oracles, out1, out2, pristine)
    except Stop:
        return False, float("inf"), None, None
    seen = blind(oracles, refs, run.ctx.task.meta.tolerance)
    if f is None:
        return True, 0.0, seen, None
    errs = [c.stats.get("max_err", 0.0) / max(float(o.double().abs().max()), 1e-30)
            for c, o in zip(f.comparisons, f.oracles) if not c.ok]
    return False, max(errs or [0.0]), seen, f


def locate(ctx: "Context", failure: "Failure", run: "ShapeRun | None", tests: list["TestCase"]) -> list[dict]:
    """Feedback items for a failing public test (extra public probes included)."""
    from kstrata.verify.runner import ShapeRun, Stop

    items: list[dict] = []
    for i, comp in enumerate(failure.comparisons):
        if not comp.ok and comp.bad is not None and i < len(failure.outputs):
            items += describe_tensor(failure.outputs[i], failure.oracles[i], comp.bad, comp.stats,
                                     run.inputs(failure.test) if run is not None else ())
            hint = parameter_hint(run.model, failure.outputs[i], failure.oracles[i]) if run is not None else None
            items += [hint] if hint else []
            if run is not None and not hint:
                drawn = differing(run.model, run.cand_params)
                items += [item("parameters", "source", "ModelNew's parameters hold other values than Model's "
                               f"after the same seed: {'; '.join(drawn)}. {SAME_SEED}")] if drawn else []
            if run is not None:
                layout = layout_hint(run.model_dev, run.inputs(failure.test), failure.outputs,
                                     int(comp.bad.sum()) / max(comp.bad.numel(), 1), run.device)
                items += [layout] if layout else []
                gelu = gelu_formula_hint(run.model_dev, run.inputs(failure.test), failure.outputs, run.device)
                items += [gelu] if gelu else []
                swap = swapped_operands_hint(run.model_dev, run.inputs(failure.test), failure.outputs, run.device)
                items += [swap] if swap else []
            sign = sign_hint(run.inputs(failure.test), comp.bad) if run is not None else None
            items += [sign] if sign else []
            bound = index_hint(run.model, run.inputs(failure.test), failure.outputs[i], failure.oracles[i],
                               comp.bad) if run is not None else None
            items += [bound] if bound else []
            break
    if failure.unwritten:
        for it in items:  # the two signatures match alike: say which reading comes first (newcomer nc14)
            if it["kind"] == "edge_read":
                it["text"] = ("either an output row the kernel never writes (the outputs follow kstrata's "
                              "allocation poison: see unwritten_memory, the likelier reading) or a read outside "
                              "an input: " + it["text"])
        items.append(item("unwritten_memory", "source",
                          "the outputs follow kstrata's poison: every buffer the candidate allocates is filled "
                          "with NaN on one run and 1e30 on the other (integers: the dtype's maximum, then its "
                          "minimum or 0x55 bytes), and wrong outputs hold those values: the kernel reads or "
                          "returns memory it never wrote (output elements no program stores, partial results, a "
                          "cache or an accumulator written only under a tail predicate or bounds mask, e.g. "
                          "at a size below the block or split factor)" + MASKED_OTHER.get(ctx.backend_name, "")))
    elif failure.race:
        # the interpreter's shuffled program order is triton-interp's own: named only there (queue round rt56:
        # a tvm-llvm prompt read "triton-interp runs them in a shuffled order" about a TVM PrimFunc)
        order = (" (triton-interp runs them in a shuffled order on the second run)"
                 if ctx.backend_name == "triton-interp" else "")
        items.append(item("race", "source", "two runs on the same input differ beyond rounding: "
                          "non-determinism (a race, uninitialised memory or a read past an input's end, atomics "
                          f"order, or the order of a launch's programs{order}), or state kept "
                          "between calls (the result changes from one call to the next on the same input)"))
    # which distributions fail at the failing shape (seed of the failing test)
    if run is not None:
        dists, blinds = {}, {}
        moved = [(failure.test, failure)]  # failures on a draw that moves rows (offset, far): which way failed
        for t in tests:
            if t.shape == failure.test.shape and t.seed == failure.test.seed and t.dist not in dists | blinds:
                ok, _, seen, f = _probe_failure(run, t)
                if ok and seen:  # a zero or constant output passes it too: its pass says nothing
                    blinds[t.dist] = seen
                else:
                    dists[t.dist] = ok
                moved += [(t, f)] if f is not None else []
        bad_d = [d for d, ok in dists.items() if not ok]
        # which way the rows moved matters only where a moving draw fails and others pass (rt82: a kernel wrong
        # on every draw was told "on this offset draw rows moved either way are wrong")
        # and where the task's own draw passes (rt89: an online logsumexp rescaled with exp2 of a natural-log
        # difference failed normal too, and read "the size of the values, not their sign, breaks the kernel")
        way = next((w for t, f in moved if t.dist in bad_d and len(bad_d) < len(dists) and dists.get("normal", True)
                    for w in [_direction(run, t, f)] if w), None)
        if way and way["data"]["draw"] == failure.test.dist:  # the sign is the row's: the rows say which way
            items = [i for i in items if i["kind"] != "input_sign"]  # (rt82: "a branch for negative inputs")
        items += [way] if way else []
        none = (f" ({', '.join(blinds)}: the reference output is {_BLIND_WORDS[next(iter(blinds.values()))]} "
                "on that draw at this shape, so any such output passes it: no evidence either way)" if blinds else "")
        if bad_d and len(bad_d) < len(dists):
            hint = _shifted_hint(run, failure) if bad_d == ["shifted"] else _draw_hint(bad_d)
            items.append(item("distributions", "source", f"fails for inputs drawn {', '.join(bad_d)}; passes "
                              f"{', '.join(d for d, ok in dists.items() if ok)}{hint}{none}",
                              failing=bad_d, passing=[d for d, ok in dists.items() if ok], blind=blinds))
    # the failing test again on a candidate loaded afresh, where it is the first call: a candidate that
    # passes there keeps state between calls, and whether another shape passes says nothing of shapes
    # (each is loaded afresh too: a candidate right on its first calls only was told of a shape bug)
    if run is not None and not failure.race:
        try:
            fresh_ok = _probe(ShapeRun(ctx, failure.test.shape_dict, failure.test.param_seed), failure.test)[0]
        except Stop:
            fresh_ok = False
        if fresh_ok:
            items.append(item("call_history", "source",
                              "the failing test passes when the candidate is loaded afresh and it is the first "
                              "call, and fails after earlier calls: the result changes across calls on the same "
                              "input. State is kept between calls (a counter, a cache, an accumulator or a "
                              "buffer carried from one call to the next); each call must compute its outputs "
                              "from its inputs alone", test=failure.test.describe()))
            return items
    # which public shapes fail, and whether error grows with the reduction length (each shape loaded afresh)
    per_shape: list[tuple[dict, bool, float]] = []
    for t in tests:
        if t.dist != "normal" or t.seed != tests[0].seed or any(t.shape == s[0] for s in per_shape):
            continue
        try:
            sr = ShapeRun(ctx, t.shape_dict, t.param_seed)
        except Stop:
            continue
        ok, rel, seen = _probe_blind(sr, t)
        if not (ok and seen):  # a pass that a zero or constant output gets too tells nothing of the shape
            per_shape.append((t.shape, ok, rel))
    if len(per_shape) > 1:
        passing = [dict(s) for s, ok, _ in per_shape if ok]
        failing = [dict(s) for s, ok, _ in per_shape if not ok]
        if passing and failing:
            items.append(item("shapes", "schedule", f"passes at {_shapes_text(passing)} but fails at "
                              f"{_shapes_text(failing)}: a boundary / shape-specific bug"
                              + _remainder_note(passing, failing), passing=passing, failing=failing))
        growth = [(math.prod(dict(s).values()), rel) for s, ok, rel in per_shape if not ok and rel != float("inf")]
        growth.sort()
        if len(growth) >= 2 and all(b[1] > 2 * a[1] > 0 for a, b in zip(growth, growth[1:])):
            # an elementwise op sums nothing: accumulation precision would point the wrong way (queue round rt69)
            why = ("accumulation precision (accumulate in fp32, or use a tree reduction)"
                   if ctx.task.meta.category not in ELEMENTWISE_CATEGORIES else
                   "an elementwise op sums nothing, so not accumulation: an index or offset computed in too narrow "
                   "a type, or a value that depends on the element's position?")
            items.append(item("reduction_growth", "source", f"relative error grows with problem size: {why}",
                              sizes=[g[0] for g in growth], rel_err=[g[1] for g in growth]))
    return items


def _direction(run: "ShapeRun", test: "TestCase", f: "Failure") -> dict | None:
    """:func:`kstrata.verify.draw_direction.direction_item` of a failure's first wrong output."""
    comp = next((c for c in f.comparisons if not c.ok and c.bad is not None), None)
    return direction_item(test.dist, run.inputs(test), comp.bad) if comp is not None else None


#: task categories whose ops sum nothing (the error-growth item does not name accumulation for them)
ELEMENTWISE_CATEGORIES = ("elementwise", "activation")


#: Sizes a hidden failure's public probes give one shape variable at a time
#: (:func:`boundary_probes`): a size of 1, a size below any block or split
#: factor, and one that is not a multiple of 8 or 16 -- the boundary shapes
#: the hidden sweep is made of, at sizes every task's public shape can reach.
PROBE_SIZES = (1, 3, 13)
#: Most probe shapes run after one hidden failure (each may cost a build).
PROBE_LIMIT = 8
#: Seconds of the verification's time that must be left to start a probe
#: (the verdict is decided already; a probe must not turn it into a timeout).
PROBE_MIN_S = 20.0


def probe_shapes(task: Any) -> list[tuple[dict[str, int], str]]:
    """The public boundary variants of the task's first small shape, with how
    each differs from it: every variable set to each of :data:`PROBE_SIZES`
    below its public value, one variable at a time (smallest size first),
    then all of them at once; at most :data:`PROBE_LIMIT`; then each variable
    at its largest sweep value (:func:`_large_probes`); only those at
    which the reference runs (:func:`kstrata.verify.runner.safe_shapes`).
    They depend on the task's public shapes alone, never on the secret, so
    naming them says nothing of the hidden tests."""
    from kstrata.verify.runner import safe_shapes

    if not task.small_shapes:
        return []
    base = dict(task.small_shapes[0])
    out: list[tuple[dict[str, int], str]] = []
    for size in PROBE_SIZES:
        for name, value in base.items():
            if size < value:
                out.append(({**base, name: size}, f"{name} = {size}"))
        lower = [n for n, v in base.items() if size < v]
        if len(lower) > 1:
            out.append(({**base, **{n: size for n in lower}}, f"{', '.join(lower)} = {size}"))
    known = [dict(s) for s in task.small_shapes]
    out = [(s, why) for s, why in out if s not in known]
    large = _large_probes(task, base)
    safe = safe_shapes(task, [s for s, _ in out][:PROBE_LIMIT * 2] + [s for s, _ in large])
    large = [(s, why) for s, why in large if s in safe]
    return [(s, why) for s, why in out if s in safe][:PROBE_LIMIT] + large


#: Most elements (the product of a probe shape's sizes) and FLOP (the task's formula) a larger-size probe
#: may have: a row of 65537 or a K of 4099 at the public shape's other sizes, not a 2053^3 GEMM
LARGE_PROBE_ELEMENTS = 1 << 22
LARGE_PROBE_FLOP = 1e8


def _large_probes(task: Any, base: dict[str, int]) -> list[tuple[dict[str, int], str]]:
    """One probe per variable set just past its largest value in the task's
    sweep (by :data:`kstrata.verify.plan.PERTURB_MAX` + 2, so no hidden size:
    a hidden test's size is a sweep size or one moved by at most that), where
    that is past every public value of it, the others at ``base``; at most
    :data:`LARGE_PROBE_ELEMENTS` elements and :data:`LARGE_PROBE_FLOP`. Queue round rt82's open item: a
    Triton gemv whose x offset was wrong past the first 1024-wide K chunk
    passed every public test (each K fits one chunk) and failed a hidden one,
    and the probes, all smaller than the public shape, passed too."""
    from kstrata.verify.plan import PERTURB_MAX

    out = []
    for name in base:
        top = max((s[name] for s in task.sweep_shapes if name in s), default=0)
        if top <= max(s.get(name, 0) for s in task.small_shapes):
            continue
        size = top + PERTURB_MAX + 2  # past every hidden size: a sweep size moves by at most PERTURB_MAX
        shape = {**base, name: size}
        flop = task.flops(task.full_shape(shape))
        if math.prod(shape.values()) <= LARGE_PROBE_ELEMENTS and (flop or 0) <= LARGE_PROBE_FLOP:
            out.append((shape, f"{name} = {size} (past every public {name} and the task's largest sweep size: a "
                               "loop over chunks or tiles that every public size runs once runs several times "
                               "here)"))
    return out


def boundary_probes(ctx: "Context", public: list["TestCase"], level: str) -> list[dict]:
    """Feedback after a hidden failure: public probes at shapes of the kind
    the hidden sweep holds (:func:`probe_shapes`), run in order until one
    fails. Items: ``public_probe`` naming the failing shape (public:
    reproducible, with its seed and input draw) and what it differs in from
    the public tests, then :func:`locate`'s items for it; or one
    ``public_probe`` saying that every probe passes, a pass that an all-zero
    or constant output gets too (:func:`blind`: softmax over one column) named
    apart as no evidence (red-team rt64: such probes read as passing). Nothing here derives
    from the hidden tests: the probes are the same whatever failed. No
    probe starts with less than :data:`PROBE_MIN_S` of the verification's
    time left.

    Parameters
    ----------
    ctx:
        The judge's context (its candidate process still running).
    public:
        The public tests (their first seed and distribution are used).
    level:
        The level the hidden failure was tagged with.
    """
    from kstrata.verify.plan import TestCase, _key
    from kstrata.verify.runner import POISON_PATTERNS, ShapeRun, Stop

    if not public:
        return []
    first = public[0]
    named = first.shape_dict  # in the task's order (TestCase.order), not the test key's
    tried, blinds = [], []
    for shape, why in probe_shapes(ctx.task):
        if ctx.deadline is not None and ctx.deadline - time.monotonic() < PROBE_MIN_S:
            break
        test = TestCase(_key(shape), first.param_seed, first.seed, first.dist, True, order=first.order)
        # in the prompt's words, B=8, D=1 (queue round rt58: Python reprs, {'B': 8, 'D': 1})
        head = (f"a public probe fails too: at shape {_shapes_text([shape])} (the public shape "
                f"{_shapes_text([named])} with {why}; input seed {first.seed}, draw `{first.dist}`)")
        try:  # run_test's steps (a public test: no partial change), keeping the oracle
            run = ShapeRun(ctx, shape, first.param_seed)
            pristine, refs, oracles = run.prepare(test)
            out1, out2 = run.calls(pristine, test, refs, POISON_PATTERNS)
            failure = run.judge(test, refs, oracles, out1, out2, pristine)
        except Stop as e:
            if e.verdict.value == "timeout":
                break
            return [item("public_probe", level, f"{head}: the candidate gives {e.verdict.value} "
                         f"({e.check}): {str(e.evidence.get('message', ''))[:600]}",
                         shape=shape, test=test.describe())]
        if failure is None:
            # a pass that an all-zero or constant output gets too (softmax over one column is 1.0) is no evidence
            (blinds if blind(oracles, refs, ctx.task.meta.tolerance) else tried).append(why)
            continue
        dists = list(dict.fromkeys(t.dist for t in public))
        located = locate(ctx, failure, run, [TestCase(_key(shape), first.param_seed, first.seed, d, True,
                                                      order=first.order) for d in dists])
        return [item("public_probe", level, f"{head}: reproduce it there; the items below are for that shape",
                     shape=shape, test=test.describe())] + located
    if not tried and not blinds:
        return []
    none = (f"{'; '.join(blinds)} pass, but the reference output there is all zero, or one value over all "
            "its elements, so an all-zero or constant output passes them too: no evidence either way")
    if not tried:
        return [item("public_probe", level, f"public probes at the public shape {_shapes_text([named])} with "
                     f"{none}", shapes=0, blind=blinds)]
    return [item("public_probe", level, f"public probes at the public shape {_shapes_text([named])} with "
                 f"{'; '.join(tried)} "
                 f"all pass{f' ({none})' if blinds else ''}: the hidden failure needs a larger size, another "
                 "input draw or seed", shapes=len(tried), blind=blinds)]


#: What a hidden-stage failure may say (issue #17 item 11): the kind of
#: failure, never an element count, shape, seed or input draw.
HIDDEN_MESSAGES = {
    "tolerance": "outputs outside tolerance on a hidden test",
    "determinism": "two runs on the same input differ beyond rounding (race) on a hidden test",
}
#: Evidence keys that describe a test and are dropped from hidden evidence.
_HIDDEN_KEYS = ("test", "shape", "seed", "seeds", "distribution", "dist", "stats", "shapes",
                "wrong", "total", "numel", "elements", "traceback")
_NUMBERS = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])")


def hidden_evidence(check: str, message: str | None = None) -> dict[str, Any]:
    """Evidence of a failure on a hidden test: ``{"message", "stage": "hidden"}``,
    the message from :data:`HIDDEN_MESSAGES` (or ``message`` with every number
    removed), so nothing about the test's size, seed or draw is recorded."""
    text = HIDDEN_MESSAGES.get(check) or _NUMBERS.sub("<n>", message or "a hidden test fails")
    return {"message": text, "stage": "hidden"}


def scrub_hidden(evaluation: dict[str, Any]) -> dict[str, Any]:
    """A copy of an ``Evaluation.to_dict()`` (or any dict with ``evidence``)
    whose hidden-stage evidence says nothing about the hidden test.

    Where ``evidence["stage"] == "hidden"``: keys that describe a test
    (``test``, ``shape``, ``seed``, ``stats``, element counts, tracebacks) are
    dropped and every number in ``message`` (element counts such as "3 of
    1001 elements") is replaced by ``<n>`` (or the message by the check's
    :data:`HIDDEN_MESSAGES` text). Public evidence is returned unchanged.
    """
    out = dict(evaluation)
    ev = out.get("evidence")
    if isinstance(ev, dict) and ev.get("stage") == "hidden":
        kept = {k: v for k, v in ev.items() if k not in _HIDDEN_KEYS and k != "message"}
        out["evidence"] = {**kept, **hidden_evidence(str(out.get("check") or ""), ev.get("message"))}
    return out
