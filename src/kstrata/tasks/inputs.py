"""Input distributions applied on top of a task's ``get_inputs()`` draw.

Each distribution replaces the selected floating-point inputs (all of them, or
``TaskMeta.dist_inputs``) by a tensor of the same shape and dtype:

=============  ==================================================================
normal         the task's own draw (usually ``torch.randn``), unchanged
uniform        U(-1, 1)
heavy_tailed   Student-t with 3 degrees of freedom (finite variance, rare huge values),
               its largest and smallest values moved to the tensor's last and
               first elements (alternating by input), see :func:`_extremes_at_the_edges`;
               drawn at the input's precision (:func:`_student_t3`)
large          the normal draw times 100 (exposes overflow in ``exp``/accumulators)
near_zero      the normal draw times 1e-3 (exposes division and epsilon handling); in a
               hidden test (:func:`draw_inputs` with ``vary_scalar_inputs``) also with a
               seeded subset of each drawn input's last-dimension slices (rows) set to
               exactly zero (:func:`zero_slices`): an L2 norm that dropped its epsilon
               gives NaN on an all-zero (padding) row where the reference gives 0, and
               read correct on every draw, whose rows are never zero (newcomer nc20)
shifted        the normal draw minus 10 (all-negative logits: exposes padding
               values such as ``other=0.0`` that dominate a max or a sum of ``exp``)
positive       the normal draw's absolute value plus 1: every value at least 1, the
               mirror of ``shifted``. The other default draws all hold a negative
               value somewhere in the tensor, so a minimum started at 0.0 instead
               of +inf (a per-tensor range's, a global or multi-axis reduction's)
               read correct on every one of them (red-team 2026-12-04, case rt48)
grid           uniform on the multiples of 1/64 in [-1, 1] (:data:`GRID_STEPS`):
               exact in every float dtype, and so are their products and any sum
               of them, in any order, while the partial sums stay below
               2^t / 64 (t the dtype's significand bits). A correct reduction
               then has no rounding error at all, so the reordered-reduction
               allowance is zero there and a term dropped at scale (a tile
               boundary's off-by-one in a 65537-long sum) cannot hide in it
               (:mod:`kstrata.verify.tolerance_reduction`). Few distinct values:
               ties are common, so it is not in the default draws of the
               ``exact`` and ``quant`` tolerance policies (argmax, rounding).
offset         the normal draw plus and minus :data:`OFFSET` (1000), alternating by row
               (the last dimension's rows; a vector by the test's seed): values far
               from zero with a small spread, both signs in one test. Exposes
               one-pass variance (E[x^2] - E[x]^2 cancels catastrophically in
               float32) and padding that only loses to the real values near zero
               (a softmax tile padded with -100 whose padded lanes are not masked
               out of the sum: red-team 2026-12-04)
ties           the normal draw with constant fibres: along every dimension ``d`` of a
               tensor of two or more dimensions, the fibres (rows, columns, the lines a
               reduction over ``d`` reads) whose index in each other dimension is
               :data:`TIES_EVERY`-periodic (its phase from the test's seed) hold one value ``c``, the
               smallest power of two at least the draw's largest absolute value (and 1).
               So some rows and some whole reductions along any axis are constant, all
               equal to their maximum, and every other row and column holds ties at its
               maximum (1 in :data:`TIES_EVERY` of its elements is ``c``). A vector is
               constant on even seeds, has every :data:`TIES_EVERY`-th element ``c`` on odd
               ones. Sums of ``c`` are exact in any order. A softmax that returned zeros for
               a row of equal values read correct on every other draw (red-team
               2026-12-04). Ties are common: integer outputs that do not read as indices
               into an input decide nothing on it (:mod:`kstrata.verify.ties`)
outliers       given to every quantization task (:data:`kstrata.tasks.meta.QUANTIZE_DRAWS`),
               opt-in for others: the normal draw with one element in :data:`OUTLIERS_EVERY`
               (at least one; none in a one-element tensor), at seeded positions, replaced
               by ``+-10^e`` with ``e`` uniform on [1, 9] (signs alternating), capped at the
               dtype's largest finite value / 16: far outside any int8 or int16 range at any
               usual scale, so a quantization that casts before it clamps (int16 wraps at
               ``|x / s| >= 32768``, ``|x| >= 645`` at s = 2.5/127) or overflows shows
far            given to every task whose category takes a maximum over its inputs as drawn
               (reduction, softmax, pooling, scan, loss: :data:`kstrata.tasks.meta.FAR_CATEGORIES`),
               opt-in for others: every row (the last dimension's) moved by ``-10^e`` on even seeds,
               ``+10^e`` on odd ones, ``e`` drawn per row uniform from :data:`FAR_DECADE` (4) to
               the dtype's range (``log10(max / 4)``: 37.9 in float32, 4.2 in float16): one-signed
               rows far beyond any finite padding sentinel. A softmax or row maximum padded with
               -1e4 (BERT's mask value) instead of -inf, its padded lanes kept in the sum, passed
               every other draw, whose values stay above -1006 (red-team rt54)
nonfinite      opt-in (not in :data:`kstrata.tasks.meta.DEFAULT_DISTRIBUTIONS`): the
               normal draw with one element in :data:`NONFINITE_EVERY` (at least
               three), at seeded positions, replaced by NaN, +inf and -inf in
               turn, for a task whose contract includes NaN/Inf propagation
               (a ``where``-based relu maps NaN to 0 where PyTorch's relu keeps
               NaN). The comparison matches non-finite values position by position
               (:mod:`kstrata.verify.tolerance`); where the task's own reference
               differs from its float64 oracle there, the test is outside the
               domain (:mod:`kstrata.verify.domain`).
=============  ==================================================================

Integer inputs (indices, labels, quantized weights) are never changed by a distribution; a hidden
test moves an integer parameter of one value that the reference reads as a value (a zero point:
:func:`vary_scalars`, :mod:`kstrata.verify.free_ints`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from kstrata.sandbox.wire import distinct_elements
from kstrata.tasks.meta import DISTRIBUTIONS

#: ``far`` moves each row by at least ``10^FAR_DECADE``: past -1e4, BERT's and many attention
#: kernels' finite "minus infinity" (:func:`_far`).
FAR_DECADE = 4.0
#: ``grid`` draws ``k / GRID_STEPS`` for integer ``k`` in ``[-GRID_STEPS, GRID_STEPS]``
#: (a power of two, so every value is exact in binary floating point).
GRID_STEPS = 64
#: the magnitude of the ``offset`` distribution's shift
OFFSET = 1000.0
#: ``nonfinite`` replaces about one element in this many by NaN, +inf or -inf.
NONFINITE_EVERY = 64
#: ``ties``: the period of the constant fibres' indices in each other dimension
TIES_EVERY = 4
#: ``outliers`` replaces about one element in this many by a value far outside any integer range.
OUTLIERS_EVERY = 16
#: ``outliers``' magnitudes are ``10^e`` for ``e`` uniform on this range
OUTLIER_DECADES = (1.0, 9.0)


def apply_distribution(
    inputs: Sequence[Any], dist: str, seed: int, only: Sequence[int] | None = None,
    device: str | torch.device | None = None,
) -> list[Any]:
    """Return a copy of ``inputs`` with ``dist`` applied to the selected floats.

    Parameters
    ----------
    inputs:
        The tensors (and other values) from ``get_inputs()``.
    dist:
        One of :data:`kstrata.tasks.meta.DISTRIBUTIONS`.
    seed:
        Seed of the generator used for the new draws.
    only:
        Indices the distribution applies to; None means every floating tensor.
    device:
        Where the new values of ``uniform`` and ``heavy_tailed`` are drawn. None
        or a CPU device: with a CPU generator (the values every CPU draws). A
        CUDA device: there, with a CUDA generator seeded with ``seed``, in
        the dtypes used on the CPU (the same law; other values than the CPU's,
        reproducible with the same seed on the same GPU model and PyTorch
        version, since PyTorch's CUDA Philox streams follow its launch
        configuration), the result copied back to each input's device. The
        judge draws on the task's device: on an H200 the host's float64
        ``randn`` was 51% of the judge's time
        (``benchmarks/results/verify_breakdown_gpu.txt``).

    Raises
    ------
    ValueError
        For an unknown distribution name.
    """
    if dist not in DISTRIBUTIONS:
        raise ValueError(f"unknown distribution {dist!r}; expected one of {DISTRIBUTIONS}")
    on = torch.device(device) if device is not None else None
    where = on if on is not None and on.type == "cuda" else None
    gen = torch.Generator(device=where or "cpu").manual_seed(seed)
    out = list(inputs)
    for i, x in enumerate(out):
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            continue
        if only is not None and i not in only:
            continue
        if dist == "normal":
            continue
        # drawn and scaled in float64 (heavy_tailed: at the input's precision, _student_t3), then
        # rounded once to the input's dtype; in-place steps compute the same values as the
        # expressions they stand for, in one buffer
        if dist == "uniform":
            new = torch.rand(x.shape, generator=gen, dtype=torch.float64, device=where).mul_(2).sub_(1)
        elif dist == "heavy_tailed":
            new = _extremes_at_the_edges(_student_t3(x.shape, gen, where, x.dtype), positive_last=i % 2 == 0)
        elif dist == "large":
            new = _f64(x).mul_(100)
        elif dist == "near_zero":
            new = _f64(x).mul_(1e-3)
        elif dist == "grid":
            new = torch.randint(-GRID_STEPS, GRID_STEPS + 1, x.shape, generator=gen, device=where,
                                dtype=torch.int64).to(torch.float64).div_(GRID_STEPS)
        elif dist == "offset":
            new = _f64(x)
            rows = new.view(-1, new.shape[-1]) if new.dim() > 1 else new.view(1, -1)
            sign = torch.ones(rows.shape[0], 1, dtype=torch.float64, device=rows.device)
            sign[1::2] = -1
            rows.add_(sign.mul_(OFFSET if new.dim() > 1 or seed % 2 == 0 else -OFFSET))
        elif dist == "nonfinite":
            new = _nonfinite(_f64(x), gen, where)
        elif dist == "ties":
            new = _ties(_f64(x), seed)
        elif dist == "positive":
            new = _f64(x).abs_().add_(1)
        elif dist == "outliers":
            new = _outliers(_f64(x), gen, where, x.dtype)
        elif dist == "far":
            new = _far(_f64(x), gen, where, x.dtype, seed)
        else:  # shifted
            new = _f64(x).sub_(10)
        out[i] = _in_layout(new.to(device=x.device, dtype=x.dtype), x)
    return out


def _student_t3(shape: torch.Size, gen: torch.Generator, where: torch.device | None,
                dtype: torch.dtype) -> torch.Tensor:
    """Student-t(3) values of ``shape``: ``z / sqrt((a^2 + b^2 + c^2) / 3)`` from four
    independent standard normals per element (one draw of ``shape``, then one of
    ``(3, *shape)``, from ``gen`` on ``where``), computed in float64 for a float64
    input (``dtype``) and in float32 for any other: the normals then carry float32's
    24 significant bits, as many as the values keep once rounded to the input's
    dtype, and the law is the same. PyTorch draws float32 normals with a vectorized
    Box-Muller, float64 ones element by element: at 4096 x 4096, the judge's
    nominal-shape draw, the float64 draw took 2.0 CPU s, this 0.58 s; it was the
    largest part of a full-scope verification of a suite task (two such draws per
    verification; four of 6144 x 8192 in red-team case 02)."""
    d = torch.float64 if dtype == torch.float64 else torch.float32
    z = torch.randn(shape, generator=gen, dtype=d, device=where)
    chi2 = torch.randn((3, *shape), generator=gen, dtype=d, device=where).square_().sum(0)
    return z.div_(chi2.div_(3).sqrt_())


def _f64(x: torch.Tensor) -> torch.Tensor:
    """A contiguous float64 copy of ``x`` (whatever its layout: the distributions view it by rows)."""
    return x.to(torch.float64, copy=True, memory_format=torch.contiguous_format)


def _in_layout(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``values`` laid out as ``like`` (its strides: a transpose, a
    permutation, a slice with gaps), as ``get_inputs()`` made it: the
    candidate is verified on the task's own layout (newcomer nc17: a kernel
    that read a transposed input as row-major passed on contiguous draws).
    An expanded view, whose elements share memory, cannot hold a new value per
    element: contiguous."""
    if like.is_contiguous() or not distinct_elements(like.shape, like.stride()):
        return values.contiguous()
    out = torch.empty_strided(like.shape, like.stride(), dtype=values.dtype, device=values.device)
    return out.copy_(values)


#: ``draw_inputs(..., vary_scalar_inputs=True)`` multiplies a floating input of one value that the
#: draw left as ``get_inputs()`` made it by ``2^u``, ``u`` uniform on this range (:func:`vary_scalars`).
SCALAR_OCTAVES = (-1.0, 1.0)


def vary_scalars(inputs: list[Any], dist: str, seed: int, only: Sequence[int] | None = None,
                 ints: Sequence[int] = (), fixed: Sequence[int] = ()) -> list[Any]:
    """``inputs`` after :func:`apply_distribution` with each floating tensor that
    the draw left unchanged (the ``normal`` draw, or an index ``only`` leaves
    out) and that holds one value (one element, or every element one finite
    value other than 0 and +-1: :func:`_one_value`), and each finite Python
    ``float`` among them, multiplied by ``2^u``,
    ``u`` drawn from ``seed`` uniform on :data:`SCALAR_OCTAVES` (a factor in
    [0.5, 2]). Such an input (a quantization scale, a temperature, an epsilon
    given as a tensor, a per-channel scale filled with one number) had the
    task's one value in every test, so a kernel that wrote that value in and
    never read the input (``x / (2.5 / 127)``) read correct on every test of
    ``quantize_per_tensor`` off the timing (red-team rt56). The judge applies
    it to hidden tests, so the public tests keep the task's own values.

    ``ints``: indices of integer inputs moved too (:func:`move_int`): a one-valued integer tensor
    or a Python int there (a dequantization's zero point, 3 at every seed: a kernel with 3
    written in read correct on every test, red-team rt58). The judge names them
    (:func:`kstrata.verify.free_ints.free_int_inputs`: those the reference reads as values).
    ``fixed``: indices never moved (``TaskMeta.fixed_inputs``)."""
    gen = torch.Generator().manual_seed(seed * 7919 + 17)
    out = list(inputs)
    for i, x in enumerate(out):
        if i in fixed:
            continue
        if i in ints:
            out[i] = move_int(x, float(torch.rand((), dtype=torch.float64, generator=gen, device="cpu")))
            continue
        if type(x) is float and math.isfinite(x):  # a Python number: no distribution draws it
            out[i] = x * 2.0 ** float(torch.empty((), dtype=torch.float64, device="cpu").uniform_(*SCALAR_OCTAVES,
                                                                                                   generator=gen))
            continue
        if not (isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel()):
            continue
        if dist != "normal" and (only is None or i in only):
            continue  # the distribution drew it
        if x.numel() > 1 and not _one_value(x):
            continue
        u = torch.empty((), dtype=torch.float64, device="cpu").uniform_(*SCALAR_OCTAVES, generator=gen)
        out[i] = (x.to(torch.float64) * 2.0 ** float(u)).to(x.dtype)
    return out


def int_value(x: Any) -> int | None:
    """The one value of an integer input: a Python int (not a bool), a one-element integer
    tensor, or an integer tensor whose elements all hold one value other than 0 and +-1 (not a
    mask or labels); also 0 for a floating input that is exactly zero (a Python float, a
    one-element tensor: a float zero point or offset of 0.0, which no scaling moves). None for
    anything else."""
    if type(x) is int:
        return x
    if type(x) is float:
        return 0 if x == 0 else None
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return 0 if x.numel() == 1 and float(x.reshape(-1)[0]) == 0 else None
    if not isinstance(x, torch.Tensor) or x.is_complex() or x.dtype == torch.bool or x.numel() == 0:
        return None
    v = int(x.reshape(-1)[0])
    if x.numel() > 1 and (v in (-1, 0, 1) or not bool((x == v).all())):
        return None
    return v


def move_int(x: Any, r: float) -> Any:
    """``x`` (see :func:`int_value`) with its value ``v`` moved by ``r`` in [0, 1]: ``|v| >= 2``
    to ``round(v * 2^(2r - 1))`` (a factor in [0.5, 2], the sign kept, as floats are scaled),
    ``0`` and ``+-1`` by 1 to 3 away from zero; never to ``v`` itself, and within the tensor's
    dtype (the other way where the move would leave it). Anything else is returned unchanged."""
    v = int_value(x)
    if v is None:
        return x
    if abs(v) >= 2:
        new = round(v * 2.0 ** (2 * r - 1))
        new = new if new != v else v + (1 if r >= 0.5 else -1) * (1 if v > 0 else -1)
    else:
        new = v + (1 if v >= 0 else -1) * (1 + min(int(r * 3), 2))
    if type(x) is float or isinstance(x, torch.Tensor) and x.is_floating_point():
        return float(new) if type(x) is float else torch.full_like(x, new)
    if isinstance(x, torch.Tensor):
        info = torch.iinfo(x.dtype)
        if not info.min <= new <= info.max:
            new = v - (new - v)
            if not info.min <= new <= info.max:
                return x
        return torch.full_like(x, new)
    return new


def _one_value(x: torch.Tensor) -> bool:
    """Whether every element of ``x`` holds one finite value other than 0 and +-1 (a per-channel
    scale filled with one number; not a mask of ones, whose 1 is a structure, not a magnitude)."""
    v = x.reshape(-1)[0]
    return bool(torch.isfinite(v)) and float(v.abs()) not in (0.0, 1.0) and bool((x == v).all())


def draw_inputs(get_inputs: Callable[[], Sequence[Any]], seed: int, dist: str, only: Sequence[int] | None = None,
                device: str | torch.device | None = None,
                vary_scalar_inputs: bool = False, ints: Sequence[int] = (),
                fixed: Sequence[int] = ()) -> tuple[list[Any], list[Any] | None]:
    """One test's inputs as the judge draws them: ``get_inputs()`` after
    :func:`seed_all` with ``seed + 1``, then :func:`apply_distribution` with ``seed``
    (and, with ``vary_scalar_inputs``, the judge's hidden tests: :func:`zero_slices` on the
    ``near_zero`` draw, then :func:`vary_scalars`).

    Parameters
    ----------
    get_inputs:
        The task module's ``get_inputs``.
    seed, dist, only:
        As :func:`apply_distribution` (``dist`` one of :data:`DISTRIBUTIONS`).
    ints, fixed:
        As :func:`vary_scalars` (with ``vary_scalar_inputs`` only).
    device:
        Where the values are drawn. None or a CPU device: on the CPU, the
        values every CPU draws (the same as before this function existed). A
        CUDA device: ``get_inputs()`` runs with it as torch's default device,
        so its factory calls (``torch.randn(B, D)``) draw there from the
        device's default generator, seeded with ``seed + 1`` by
        :func:`seed_all`, and the distribution's draws come from a generator
        on the device too (:func:`apply_distribution`). The values are then
        the same per (seed, shape, distribution) on every run on the same GPU
        model with the same PyTorch version (CUDA's Philox streams follow
        PyTorch's launch configuration), and not the CPU's. On an H200 the
        host's ``torch.randn`` of the judge's draws was half a full-scope
        softmax verification (``benchmarks/results/verify_breakdown_gpu.txt``).

    Returns
    -------
    (host, on_device):
        ``host``: the inputs on the CPU (tensors with the dtypes and shapes
        ``get_inputs()`` gives, contiguous; other values as they are), what
        goes to the candidate's process and to the float64 oracle.
        ``on_device``: for a CUDA ``device``, the same values where they were
        drawn (the reference's copies are made from them, without a copy back
        to the GPU); None otherwise.

    Raises
    ------
    ValueError
        For an unknown distribution name; what ``get_inputs`` raises.
    """
    on = torch.device(device) if device is not None else torch.device("cpu")
    if on.type == "cuda" and on.index is None:
        on = torch.device("cuda", torch.cuda.current_device())
    seed_all(seed + 1)
    with torch.device(on):  # on the CPU: what the factory calls do anyway, the same values
        xs = apply_distribution(list(get_inputs()), dist, seed, only, device=on)
        if vary_scalar_inputs:
            if dist == "near_zero":
                xs = zero_slices(xs, seed, only)
            xs = vary_scalars(xs, dist, seed, only, ints, fixed)
    if on.type == "cpu":
        return xs, None
    return [x.cpu() if isinstance(x, torch.Tensor) else x for x in xs], xs


#: ``near_zero`` in a hidden test zeroes about one last-dimension slice in this many (at least one).
ZERO_SLICES_EVERY = 8


def zero_slices(inputs: Sequence[Any], seed: int, only: Sequence[int] | None = None) -> list[Any]:
    """``inputs`` with some last-dimension slices (rows: ``x[i, j, :]``) of each floating
    tensor the distribution drew (every one, or those ``only`` names; a one-element tensor,
    a scale, is left as it is) set to exactly zero: ``max(1, rows // ZERO_SLICES_EVERY)``
    rows at positions drawn from ``seed`` (a CPU generator), so a hidden test's secret seed
    picks them. A vector (one row) is zeroed whole on odd seeds and kept on even ones, so
    its scale test stays. The tensors are new (:func:`apply_distribution` made them) and
    are changed in place, keeping their layout and device.

    An all-zero row is where an epsilon matters: ``x / sqrt(sum(x^2) + eps)`` is 0 there
    and NaN without the ``eps`` (newcomer nc20: a kernel without it read correct, since
    the ``near_zero`` draw only scales by 1e-3). Where the reference and the float64
    oracle are both non-finite on such a row (a task with no epsilon), those elements are
    outside the domain (:func:`kstrata.verify.domain.nonfinite_from_finite`)."""
    gen = torch.Generator().manual_seed(seed * 6007 + 29)
    out = list(inputs)
    for i, x in enumerate(out):
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()) or x.numel() < 2:
            continue
        if only is not None and i not in only:
            continue
        if x.dim() == 1:
            if seed % 2:
                x.zero_()
            continue
        lead = x.shape[:-1]
        n = math.prod(lead)
        k = max(1, n // ZERO_SLICES_EVERY)
        at = torch.randperm(n, generator=gen, device="cpu")[:k] if n <= 1 << 20 \
            else torch.randint(0, n, (k,), generator=gen, device="cpu")
        mask = torch.zeros(n, dtype=torch.bool, device="cpu")
        mask[at] = True
        x[mask.view(lead).to(x.device)] = 0
    return out


def seed_all(seed: int) -> None:
    """Seed torch's generators as :func:`torch.manual_seed` does, at a fraction
    of its cost where it would do nothing more.

    ``torch.manual_seed`` also queues a seed for every accelerator runtime not
    yet initialized (CUDA, XPU, MTIA), formatting the caller's stack each time
    (``traceback.format_stack``): about 0.14 ms per call on a busy 2-core CPU
    against 0.003 ms here, some 0.05 s of a KernelBench file's verification
    (under cProfile the stack formatting looked 50 times costlier). Here the
    CPU generator is seeded, and CUDA's generators when CUDA is initialized;
    where CUDA is available but not yet initialized (its queued seed would
    apply once it is), this is ``torch.manual_seed`` itself. The draws after
    it are the same as after ``torch.manual_seed(seed)``.

    Parameters
    ----------
    seed:
        The seed (an int in ``torch.manual_seed``'s range).
    """
    if torch.cuda.is_initialized():
        torch.cuda.manual_seed_all(seed)
    elif torch.cuda.is_available():
        torch.random.manual_seed(seed)  # torch.manual_seed without dynamo's wrapper
        return
    torch.default_generator.manual_seed(seed)


def _nonfinite(x: torch.Tensor, gen: torch.Generator, where: torch.device | None) -> torch.Tensor:
    """``x`` (float64) with ``min(numel, max(3, numel // NONFINITE_EVERY))``
    elements at positions drawn from ``gen`` (on ``where``) set to NaN, +inf
    and -inf in turn: distinct positions up to 4096 elements (so a small
    tensor holds each of the three), independent ones above."""
    flat = x.view(-1)
    n = flat.numel()
    k = min(n, max(3, n // NONFINITE_EVERY))
    if not k:
        return x
    if n <= 4096:
        at = torch.randperm(n, generator=gen, device=where)[:k]
    else:
        at = torch.randint(0, n, (k,), generator=gen, device=where)
    at = at.to(flat.device)
    kinds = torch.tensor([float("nan"), float("inf"), float("-inf")], dtype=torch.float64, device=flat.device)
    values = kinds[torch.arange(k, device=flat.device) % 3]
    # positions drawn twice: the later value, as a sequential store leaves it (an index_put with repeated
    # indices keeps either on a GPU, or on several CPU threads: the draw was not reproducible on an H200)
    order, perm = torch.sort(at, stable=True)
    last = torch.ones_like(order, dtype=torch.bool)
    last[:-1] = order[1:] != order[:-1]
    flat[order[last]] = values[perm[last]]
    return x


def _ties(x: torch.Tensor, seed: int) -> torch.Tensor:
    """``x`` (float64) with the constant fibres of the ``ties`` draw (module
    docstring): the value ``c`` where, for some dimension ``d``, every other
    dimension's index is ``r_e`` modulo :data:`TIES_EVERY` (``r_e`` from
    ``seed``, below that dimension's size, so every size has such indices)."""
    if x.numel() < 2:
        return x
    top = float(x.abs().max())
    c = 2.0 ** math.ceil(math.log2(max(top, 1.0))) if math.isfinite(top) else 1.0
    if x.dim() == 1:
        if seed % 2 == 0:
            return x.fill_(c)
        x[(seed // 2) % min(TIES_EVERY, x.shape[0])::TIES_EVERY] = c
        return x
    on = [torch.arange(n, device=x.device) % TIES_EVERY == (seed >> (2 * e)) % min(TIES_EVERY, n)
          for e, n in enumerate(x.shape)]

    def along(d: int) -> torch.Tensor:  # the fibres along d: every other index on its phase
        m = torch.ones((1,) * x.dim(), dtype=torch.bool, device=x.device)
        for e, sel in enumerate(on):
            if e != d:
                m = m & sel.view([-1 if i == e else 1 for i in range(x.dim())])
        return m

    mask = along(0)
    for d in range(1, x.dim()):
        mask = mask | along(d)
    return x.masked_fill_(mask.expand(x.shape), c)


def _far(x: torch.Tensor, gen: torch.Generator, where: torch.device | None, dtype: torch.dtype, seed: int
         ) -> torch.Tensor:
    """``x`` (float64, contiguous) with every row (last-dimension fibre; a vector is one
    row) moved by ``s * 10^e``: ``s`` = -1 on even seeds and +1 on odd ones, ``e`` drawn
    per row uniform on ``[FAR_DECADE, log10(max / 4)]`` for odd rows, ``max`` the
    largest finite value of the input's ``dtype`` (float16's range stops near 1.6e4),
    and on ``[FAR_DECADE, FAR_DECADE + 1]`` for even ones (a vector: the latter). At
    10^5 and beyond a float32 row's own rounding (ulp 0.008 at 1e5, 1024 at 1e10)
    decides its outputs, and the judge allows for it (a backward-error allowance,
    :meth:`kstrata.verify.runner.ShapeRun._far_allowance`): the near rows are where a
    finite sentinel's error stands out of it in every test, however few its rows."""
    rows = x.view(-1, x.shape[-1]) if x.dim() > 1 else x.view(1, -1)
    hi = math.log10(torch.finfo(dtype).max / 4)
    lo = min(FAR_DECADE, hi)
    e = torch.rand(rows.shape[0], 1, generator=gen, dtype=torch.float64, device=where).to(rows.device)
    top = torch.full_like(e, hi)
    top[0::2] = min(lo + 1, hi)  # even rows near: the sentinel's error is beyond the allowance there
    rows.add_(torch.pow(10.0, e.mul_(top - lo).add_(lo)).mul_(-1.0 if seed % 2 == 0 else 1.0))
    return x


def _outliers(x: torch.Tensor, gen: torch.Generator, where: torch.device | None, dtype: torch.dtype
              ) -> torch.Tensor:
    """``x`` (float64) with ``max(1, numel // OUTLIERS_EVERY)`` elements at
    positions drawn from ``gen`` (on ``where``) set to ``+-10^e``, ``e``
    uniform on :data:`OUTLIER_DECADES`, signs alternating, capped at
    ``dtype``'s largest finite value / 16 (a one-element tensor is left as it is)."""
    flat = x.view(-1)
    n = flat.numel()
    if n < 2:
        return x
    k = max(1, n // OUTLIERS_EVERY)
    at = (torch.randperm(n, generator=gen, device=where)[:k] if n <= 4096
          else torch.randint(0, n, (k,), generator=gen, device=where)).to(flat.device)
    lo, hi = OUTLIER_DECADES
    e = torch.rand(k, generator=gen, dtype=torch.float64, device=where).to(flat.device).mul_(hi - lo).add_(lo)
    cap = torch.finfo(dtype).max / 16 if dtype.is_floating_point else float("inf")
    values = torch.pow(10.0, e).clamp_(max=cap)
    values[1::2] *= -1
    order, perm = torch.sort(at, stable=True)  # a position drawn twice keeps its later value (as _nonfinite)
    last = torch.ones_like(order, dtype=torch.bool)
    last[:-1] = order[1:] != order[:-1]
    flat[order[last]] = values[perm[last]]
    return x


def _extremes_at_the_edges(x: torch.Tensor, positive_last: bool) -> torch.Tensor:
    """``x`` with its largest value swapped into the last element and its
    smallest into the first (the other way round when not ``positive_last``):
    the same values, so the same distribution, with the draw's rare huge values
    where a kernel that skips a buffer's tail or head misses them. Without it,
    a reduction that skipped the last 768 of 50M elements moved a mean by about
    1e-6 relative, inside any tolerance (red-team case 37); the extremes of
    Student-t(3) are hundreds of times the typical value."""
    flat = x.reshape(-1)
    if flat.numel() < 2:
        return x
    hi, lo = int(torch.argmax(flat)), int(torch.argmin(flat))
    last, first = (hi, lo) if positive_last else (lo, hi)
    n = flat.numel() - 1

    def swap(i: int, j: int) -> None:
        a, b = flat[i].clone(), flat[j].clone()
        flat[i], flat[j] = b, a

    swap(last, n)
    if first == n:  # the value meant for the front was at the end: it is where the other came from
        first = last
    swap(first, 0)
    return flat.reshape(x.shape)
