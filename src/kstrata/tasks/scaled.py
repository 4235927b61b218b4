"""Verification shapes scaled to the machine (issue #23 item 3).

KernelBench's nominal shapes are GPU-sized (level-1 elementwise inputs of
6.4 GB, 137 GFLOP GEMMs). A KernelBench file has size variables (module
globals) but no ``shapes`` metadata, so without this module its public and
hidden tests all run at the nominal shape: on a 2-core CPU a single fp64
oracle call of such a shape takes seconds to minutes and the protocol's
tests add up to hours.

On a CPU (no CUDA device, or ``KSTRATA_SHAPES=scaled``), such a task's test
shapes are derived from its nominal shape:

1. *fit*: the largest size variable at or above :data:`MIN_SCALED` (a batch
   size: at least 2) is halved
   (rounding down) until one reference call does at most
   :data:`VERIFY_MAX_FLOPS` FLOPs and touches at most
   :data:`VERIFY_MAX_BYTES` bytes (:func:`kstrata.tasks.work.measured_work`,
   on PyTorch's ``meta`` device, so no GPU-sized tensor is ever allocated).
   Size variables are those of :func:`kstrata.tasks.base.int_globals`: int
   globals, the names of a tuple assignment (``D, H, W = 16, 32, 32``) and the
   elements of tuple or list globals (``input_shape = (32768,)`` gives
   ``input_shape[0]``). A halving after which the reference no longer runs is
   tried again with the variables tied to it (:func:`halve_tied`: those of
   the same size, then each other one; HingeLoss multiplies ``(batch_size,
   *input_shape)`` by ``(batch_size,)``, so ``batch_size`` and
   ``input_shape[0]`` halve together), and where none works (a divisibility
   or layer-size constraint) it is undone and that variable frozen. Extents
   written as literals in ``get_inputs()`` (``torch.rand(batch_size, 112,
   224, 224)``) are variables too (:func:`literal_extents`, the reserved
   ``"@224"`` keys of :mod:`kstrata.tasks.dims`), halved after a variable of
   the same size;
2. *real cost*: one fp32 reference call and its float64 oracle are run at
   the fitted shape (:func:`call_cost`); where they take more than
   :data:`VERIFY_MAX_CALL_CPU_S` CPU seconds (a float64 3-D convolution is
   hundreds of times slower per FLOP than a GEMM), the limits are cut by the
   ratio and the fit done again;
3. *boundary-friendly values*: every scaled variable ``v`` (a power of two
   when the nominal one is) also appears as ``v + 1`` (``2^k + 1``: not a
   multiple of any power-of-two block size, so a kernel that forgets its
   tail fails) and as the largest prime at most ``v / 2``; variants at which
   the reference does not run are dropped (that variable keeps its fitted value).
   A nominal shape that already fits is the fitted shape, and its sizes of at
   least :data:`MIN_SCALED` (a batch size: 2) get the same variants.

The public (small) shapes are the ``v + 1`` variant; the hidden sweep is the
fitted shape, the ``v + 1`` and the prime variant (the verifier adds secret
perturbations of these). On a GPU, or with ``KSTRATA_SHAPES=nominal``, the
nominal shape is used as before. Variables the nominal shape already keeps
small (kernel sizes, channel counts below :data:`MIN_SCALED`) are never
changed. Timing shapes are chosen separately
(:func:`kstrata.tasks.scaling.fitted_shape`); a timed shape is verified too.
"""

from __future__ import annotations

import json
import os
from typing import Any

import torch

from kstrata import jsontext

#: Per-call limits of the scaled verification shape: about 10-50 ms for the
#: fp32 reference and the fp64 oracle together on 2 cores, so the ~100 tests
#: of the protocol take seconds, not hours.
VERIFY_MAX_FLOPS = 5e7
VERIFY_MAX_BYTES = 8e6
#: CPU seconds (all threads) one fp32 reference call and its float64 oracle
#: may take together at the fitted shape (about 50 ms of wall time on 2 idle
#: cores). FLOPs alone misjudge the cost: a float64 3-D convolution runs at
#: ~0.2 GFLOP/s on this CPU, hundreds of times slower per FLOP than a float64
#: GEMM, so a 5e7-FLOP Conv3d shape took 0.17 s a call and its ~100 tests
#: outlasted a verification's limit. Where the measured cost is higher, the
#: limits are cut by the ratio and the fit done again (:func:`call_cost`).
VERIFY_MAX_CALL_CPU_S = 0.1
#: The least fraction of the limits a slow reference's cost cut leaves.
MIN_LIMIT_FRACTION = 1 / 256
#: Size variables below this are never scaled (kernel sizes, strides, small channel counts).
MIN_SCALED = 16
#: Environment variable choosing the test shapes: ``scaled`` or ``nominal``.
ENV = "KSTRATA_SHAPES"

#: Bumped when the fit changes what it returns for the same file (2: tuple and
#: list size globals, tuple assignments, tied variables; 3: limits cut by the
#: reference's measured cost; 4: literal input extents), so disk caches of an
#: older fit are not reused.
CACHE_VERSION = "fit5"

_MEM: dict[tuple, tuple[list[dict[str, int]], list[dict[str, int]]] | None] = {}
_TIES: dict[tuple, list[list[str]]] = {}


class ShapeModeError(ValueError):
    """``$KSTRATA_SHAPES`` holds neither ``scaled`` nor ``nominal`` (the
    environment's mistake, not the task file's)."""


def shape_mode() -> str:
    """``scaled`` or ``nominal``: ``$KSTRATA_SHAPES`` when set, else
    ``nominal`` where CUDA is available and ``scaled`` on a CPU-only machine.

    Raises
    ------
    ShapeModeError
        For another value of ``$KSTRATA_SHAPES``.
    """
    env = os.environ.get(ENV, "").strip().lower()
    if env:
        if env not in ("scaled", "nominal"):
            raise ShapeModeError(f"{ENV}={env!r}: use 'scaled' or 'nominal', or unset it (default: nominal "
                                 "shapes where CUDA is available, scaled ones on a CPU)")
        return env
    return "nominal" if torch.cuda.is_available() else "scaled"


def applies(task: Any) -> bool:
    """Whether ``task`` is one whose test shapes are scaled: no ``shapes``
    metadata, size variables (module globals), and scaled mode."""
    from kstrata.tasks.base import int_globals

    s = task.meta.shapes
    if s.nominal or s.small or s.sweep or not int_globals(task.source):
        return False
    return shape_mode() == "scaled"


def _min_scaled(name: str) -> int:
    """The least value a variable is halved from: a batch size goes down to 1
    (it changes no layer's size), other sizes stop at :data:`MIN_SCALED`."""
    return 2 if "batch" in name.lower() else MIN_SCALED


def _runs(task: Any, shape: dict[str, int]) -> bool:
    from kstrata.tasks.scaling import reference_runs

    with torch.random.fork_rng(devices=[]):
        return reference_runs(task, shape)


def _prime_at_most(n: int) -> int:
    for p in range(n, 1, -1):
        if all(p % d for d in range(2, int(p**0.5) + 1)):
            return p
    return 1


def tie_groups(var: str, cands: list[str], shape: dict[str, int], pairs: bool = True) -> list[list[str]]:
    """Variables to halve together with ``var`` when halving it alone breaks
    the reference: first every candidate of the same size (HingeLoss's
    ``predictions (B, N) * targets (B,)``, where ``N = input_shape[0]`` and
    ``B = batch_size`` are both 32768), then (``pairs``) ``var`` with each
    other candidate, largest first (``LayerNorm(out_channels)`` over a
    transposed convolution's width ``2 W``).

    Parameters
    ----------
    var:
        The variable whose halving alone broke the reference.
    cands:
        The variables that may still be halved (``var`` among them).
    shape:
        The current full shape (sizes by variable).

    Returns
    -------
    list of lists of names, each starting with ``var``, in the order to try.
    """
    same = [k for k in cands if k != var and shape[k] == shape[var]]
    groups = [[var, *same]] if same else []
    if pairs:
        for k in sorted((k for k in cands if k != var), key=lambda k: (-shape[k], k)):
            if [var, k] not in groups:
                groups.append([var, k])
    return groups


def halve_tied(shape: dict[str, int], var: str, cands: list[str],
               works: Any, pairs: bool = True) -> tuple[dict[str, int], Any, list[str]] | None:
    """Halve ``var`` (rounding down), alone or, where that breaks the
    reference, with the variables it is tied to (:func:`tie_groups`).

    ``works(trial)`` is the caller's check of a trial shape: None (or an
    exception) where the reference does not run there, else anything, which
    is returned. Returns ``(trial shape, works(trial), the variables halved)``,
    or None when no halving of ``var`` works (the caller freezes it).
    """
    def attempt(group: list[str]) -> tuple[dict[str, int], Any, list[str]] | None:
        trial = {**shape, **{k: shape[k] // 2 for k in group}}
        try:
            got = works(trial)
        except Exception:  # noqa: BLE001 - the shape breaks a constraint
            return None
        return None if got is None else (trial, got, group)

    done = attempt([var])
    if done:
        return done
    for group in tie_groups(var, cands, shape, pairs):
        done = attempt(group)
        if done:
            return done
    return None


def literal_extents(task: Any, shape: dict[str, int]) -> dict[str, int]:
    """Extents of the tensors ``get_inputs()`` returns at ``shape`` that no
    size variable gives: literals such as the ``224, 224`` of
    ``torch.rand(batch_size, in_channels, 224, 224)``, as the reserved keys of
    :mod:`kstrata.tasks.dims` (``{"@224": 224}``), which resize those inputs.
    Only extents of at least :data:`kstrata.tasks.dims.MIN_VARIED` that equal
    no size variable's value (an extent equal to one may come from it). The
    inputs are drawn on the ``meta`` device (no memory). ``{}`` where they
    cannot be drawn there."""
    from kstrata.tasks import dims

    try:
        with torch.random.fork_rng(devices=[]):
            module = task.load_module(shape)
            with torch.device("meta"):
                xs = list(module.get_inputs())
    except Exception:  # noqa: BLE001 - inputs that cannot be drawn on meta: no literal extents
        return {}
    values = set(shape.values())
    extents = sorted({int(e) for x in xs if isinstance(x, torch.Tensor) for e in x.shape
                      if e >= dims.MIN_VARIED and e not in values})
    return {f"{dims.PREFIX}{e}": e for e in extents}


def _fit(task: Any, max_flops: float, max_bytes: float) -> tuple[dict[str, int], list[list[str]]] | None:
    from kstrata.tasks.work import _static_bytes, measured_work

    nominal = task.full_shape(None)
    # literal input extents (an image size written in get_inputs()) scale too, after the variables at
    # the same size: they are the last resort of a file whose variables alone cannot reach the limits
    literal = literal_extents(task, nominal)
    try:
        measured_work(task, nominal, real_run=False)
        on_meta = True
    except Exception:  # noqa: BLE001 - not meta-traceable: bound by input bytes, then measure for real
        on_meta = False

    def work(shape: dict[str, int]) -> tuple[float, float] | None:
        if on_meta:
            try:
                return measured_work(task, shape, real_run=False)
            except Exception:  # noqa: BLE001 - the shape breaks a constraint
                return None
        try:
            static = _static_bytes(task, shape)
        except Exception:  # noqa: BLE001
            return None
        if static > max_bytes:
            return 0.0, static
        try:
            return measured_work(task, shape)
        except Exception:  # noqa: BLE001
            return None

    shape = {**nominal, **literal}
    w = work(shape)
    if w is None:
        return None
    frozen: set[str] = set()
    ties: list[list[str]] = []
    while w[0] > max_flops or w[1] > max_bytes:
        cands = [k for k, v in shape.items() if v >= _min_scaled(k) and k not in frozen]
        if not cands:
            break
        var = max(cands, key=lambda k: (shape[k], not k.startswith("@"), k))
        # pairs only where the work is measured on the meta device (a real run per pair costs too much)
        done = halve_tied(shape, var, cands, work, pairs=on_meta)
        if done is None:
            frozen.add(var)
            continue
        shape, w, group = done
        if len(group) > 1 and sorted(group) not in ties:
            ties.append(sorted(group))
    return {k: v for k, v in shape.items() if k not in literal or v != literal[k]}, ties


def scaled_shapes(task: Any, max_flops: float = VERIFY_MAX_FLOPS,
                  max_bytes: float = VERIFY_MAX_BYTES) -> tuple[list[dict[str, int]], list[dict[str, int]]] | None:
    """``(small, sweep)`` test shapes of ``task`` scaled to the limits (module
    docstring), or None when they do not apply (:func:`applies`) or no shape
    other than the nominal one at which the reference runs was found. Where
    the nominal shape already fits, it is the fitted shape and its size
    variables (at least :data:`MIN_SCALED`, a batch size at least 2) get the
    ``v + 1`` and prime variants all the same.

    Parameters
    ----------
    task:
        A :class:`kstrata.tasks.base.Task`.
    max_flops, max_bytes:
        Per-call limits (FLOPs, bytes) of the fitted shape.

    Returns
    -------
    tuple of two lists of full shapes, or None
        Cached in memory and on disk by the task digest, the limits and the torch version.
    """
    if not applies(task):
        return None
    from kstrata.tasks.work import _disk_path, cache_root

    key = (task.digest, float(max_flops), float(max_bytes), torch.__version__)
    if key in _MEM:
        return _MEM[key]
    path = cache_root() / "task_shapes" / _disk_path(task.digest).name
    skey = f"{max_flops:g}/{max_bytes:g}/torch={torch.__version__}/{CACHE_VERSION}"
    try:
        disk = jsontext.loads(path.read_text()).get(skey)
    except (OSError, ValueError, AttributeError):
        disk = None
    if isinstance(disk, dict) and "small" in disk:
        result = (disk["small"], disk["sweep"]) if disk["small"] else None
        _MEM[key] = result
        _TIES[key] = [list(g) for g in disk.get("ties") or []]
        return result
    result, tied = _compute(task, max_flops, max_bytes)
    _MEM[key] = result
    _TIES[key] = tied
    try:
        data = jsontext.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        data = {}
    data[skey] = {"small": result[0] if result else [], "sweep": result[1] if result else [], "ties": tied}
    try:
        from kstrata.atomic import write_atomic

        write_atomic(path, json.dumps(data, sort_keys=True))
    except OSError:
        pass
    return result


def _compute(task: Any, max_flops: float,
             max_bytes: float) -> tuple[tuple[list[dict[str, int]], list[dict[str, int]]] | None, list[list[str]]]:
    nominal = task.full_shape(None)
    got = _fit(task, max_flops, max_bytes)
    fitted, tied = got if got else (None, [])
    if fitted is not None and _runs(task, fitted):
        # the reference's real cost: cut the limits by the measured overrun and fit again (at most twice)
        flops, nbytes = max_flops, max_bytes
        for _ in range(2):
            cost = call_cost(task, fitted)
            if cost is None or cost <= VERIFY_MAX_CALL_CPU_S:
                break
            w = _work_or_none(task, fitted)
            if w is None:
                break
            ratio = VERIFY_MAX_CALL_CPU_S / cost
            flops = max(max_flops * MIN_LIMIT_FRACTION, min(flops, w[0]) * ratio) if w[0] else flops
            nbytes = max(max_bytes * MIN_LIMIT_FRACTION, min(nbytes, w[1]) * ratio) if w[1] else nbytes
            refit = _fit(task, flops, nbytes)
            if refit is None or refit[0] == fitted or not _runs(task, refit[0]):
                break
            fitted, tied = refit[0], sorted({tuple(g) for g in [*tied, *refit[1]]})
            tied = [list(g) for g in tied]
    if fitted is None or not _runs(task, fitted):
        return None, []
    scaled = [k for k in fitted if fitted[k] != _nominal_value(nominal, k)]
    if not scaled:  # the nominal shape fits: its sizes get the boundary variants all the same (newcomer
        # nc17: a task made smaller had its public tests at the nominal shape only, no tail exposed)
        scaled = [k for k in fitted if fitted[k] >= _min_scaled(k)]

    def variant(value_of: Any) -> dict[str, int]:
        whole = {**fitted, **{k: value_of(fitted[k]) for k in scaled}}
        if _runs(task, whole):
            return whole
        shape = dict(fitted)
        for k in scaled:  # one variable at a time; a variable whose variant breaks keeps its fitted value
            trial = {**shape, k: value_of(fitted[k])}
            if trial != shape and _runs(task, trial):
                shape = trial
        return shape

    odd = variant(lambda v: v + 1)
    low = variant(lambda v: _prime_at_most(max(2, v // 2)))
    sweep: list[dict[str, int]] = []
    for s in (fitted, odd, low):
        if s not in sweep:
            sweep.append(s)
    if sweep == [nominal]:  # no variant runs: the nominal shape as before
        return None, []
    return ([odd], sweep), tied


def _work_or_none(task: Any, shape: dict[str, int]) -> tuple[float, float] | None:
    from kstrata.tasks.work import measured_work

    try:
        return measured_work(task, shape, real_run=False)
    except Exception:  # noqa: BLE001 - not meta-traceable
        try:
            return measured_work(task, shape)
        except Exception:  # noqa: BLE001
            return None


def call_cost(task: Any, shape: dict[str, int]) -> float | None:
    """CPU seconds (all threads; contention from other processes barely
    changes it) of one fp32 reference call plus one float64 oracle call at
    ``shape``, the lesser of two runs after a warm-up, with the verifier's
    own float64 conversion (:func:`kstrata.verify.runner.oracle_model`); the
    reference call alone where the model has no float64 run. None where the
    reference does not run at ``shape``. Random state is left as it was."""
    import time

    from kstrata.verify.runner import flatten, oracle_model

    def cpu(fn: Any) -> float:
        fn()
        best = float("inf")
        for _ in range(2):
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
        return best

    with torch.random.fork_rng(devices=[]):
        try:
            model, inputs, _, _ = task.instantiate(shape, 0)
            with torch.no_grad():
                total = cpu(lambda: flatten(model(*inputs)))
        except Exception:  # noqa: BLE001 - the reference does not run here
            return None
        m64 = oracle_model(model)
        if m64 is None:
            return total
        x64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
        was = torch.get_default_dtype()
        try:
            torch.set_default_dtype(torch.float64)
            with torch.no_grad():
                total += cpu(lambda: flatten(m64(*x64)))
        except Exception:  # noqa: BLE001 - no float64 run: the native reference is the oracle
            pass
        finally:
            torch.set_default_dtype(was)
    return total


def ties(task: Any, max_flops: float = VERIFY_MAX_FLOPS, max_bytes: float = VERIFY_MAX_BYTES) -> list[list[str]]:
    """Groups of size variables of ``task`` that the fit had to halve
    together (:func:`tie_groups`: the reference does not run when one moves
    alone), e.g. ``[["batch_size", "input_shape[0]"]]`` for HingeLoss; ``[]``
    where the shapes are not scaled or nothing was tied. Test shapes derived
    from the scaled ones (:func:`kstrata.verify.plan.perturbed_shapes`) move a
    group of equal sizes together."""
    if scaled_shapes(task, max_flops, max_bytes) is None:
        return []
    return [list(g) for g in _TIES.get((task.digest, float(max_flops), float(max_bytes), torch.__version__), [])]


def _nominal_value(nominal: dict[str, int], key: str) -> int:
    """A variable's nominal value; a literal input extent's (``"@224"``) is its own."""
    from kstrata.tasks import dims

    return nominal[key] if key in nominal or not dims.is_dim_key(key) else int(key[len(dims.PREFIX):])


def _name(key: str) -> str:
    from kstrata.tasks import dims

    return f"the input extent {key[len(dims.PREFIX):]}" if dims.is_dim_key(key) else key


def describe(task: Any) -> str | None:
    """One line naming the scaled test shapes of ``task`` (None when not scaled)."""
    got = scaled_shapes(task)
    if not got:
        return None
    nominal = task.full_shape(None)
    fit = got[1][0]
    changed = ", ".join(f"{_name(k)}={fit[k]} (nominal {_nominal_value(nominal, k)})" for k in fit
                        if fit[k] != _nominal_value(nominal, k))
    if not changed:
        return ("tests run at the nominal shape (it fits this CPU) plus boundary variants of its sizes (v + 1, "
                "a prime); shapes.small/shapes.sweep metadata chooses others")
    return (f"tests run at shapes scaled to this CPU: {changed}, plus boundary variants; "
            f"{ENV}=nominal uses the nominal shape")
