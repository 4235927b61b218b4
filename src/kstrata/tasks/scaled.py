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
   on PyTorch's ``meta`` device, so no GPU-sized tensor is ever allocated); a
   halving after which the reference no longer runs (a divisibility or
   layer-size constraint) is undone and that variable frozen;
2. *boundary-friendly values*: every scaled variable ``v`` (a power of two
   when the nominal one is) also appears as ``v + 1`` (``2^k + 1``: not a
   multiple of any power-of-two block size, so a kernel that forgets its
   tail fails) and as the largest prime at most ``v / 2``; variants at which
   the reference does not run are dropped (that variable keeps its fitted value).

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

#: Per-call limits of the scaled verification shape: about 10-50 ms for the
#: fp32 reference and the fp64 oracle together on 2 cores, so the ~100 tests
#: of the protocol take seconds, not hours.
VERIFY_MAX_FLOPS = 5e7
VERIFY_MAX_BYTES = 8e6
#: Size variables below this are never scaled (kernel sizes, strides, small channel counts).
MIN_SCALED = 16
#: Environment variable choosing the test shapes: ``scaled`` or ``nominal``.
ENV = "KSTRATA_SHAPES"

_MEM: dict[tuple, tuple[list[dict[str, int]], list[dict[str, int]]] | None] = {}


def shape_mode() -> str:
    """``scaled`` or ``nominal``: ``$KSTRATA_SHAPES`` when set, else
    ``nominal`` where CUDA is available and ``scaled`` on a CPU-only machine.

    Raises
    ------
    ValueError
        For another value of ``$KSTRATA_SHAPES``.
    """
    env = os.environ.get(ENV, "").strip().lower()
    if env:
        if env not in ("scaled", "nominal"):
            raise ValueError(f"{ENV}={env!r}: use 'scaled' or 'nominal'")
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


def _fit(task: Any, max_flops: float, max_bytes: float) -> dict[str, int] | None:
    from kstrata.tasks.work import _static_bytes, measured_work

    nominal = task.full_shape(None)
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

    shape = dict(nominal)
    w = work(shape)
    if w is None:
        return None
    frozen: set[str] = set()
    while w[0] > max_flops or w[1] > max_bytes:
        cands = [k for k, v in shape.items() if v >= _min_scaled(k) and k not in frozen]
        if not cands:
            break
        var = max(cands, key=lambda k: (shape[k], k))
        trial = {**shape, var: shape[var] // 2}
        wt = work(trial)
        if wt is None:
            frozen.add(var)
            continue
        shape, w = trial, wt
    return shape


def scaled_shapes(task: Any, max_flops: float = VERIFY_MAX_FLOPS,
                  max_bytes: float = VERIFY_MAX_BYTES) -> tuple[list[dict[str, int]], list[dict[str, int]]] | None:
    """``(small, sweep)`` test shapes of ``task`` scaled to the limits (module
    docstring), or None when they do not apply (:func:`applies`), the nominal
    shape already fits, or no scaled shape at which the reference runs was found.

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
    skey = f"{max_flops:g}/{max_bytes:g}/torch={torch.__version__}"
    try:
        disk = json.loads(path.read_text()).get(skey)
    except (OSError, ValueError, AttributeError):
        disk = None
    if isinstance(disk, dict) and "small" in disk:
        result = (disk["small"], disk["sweep"]) if disk["small"] else None
        _MEM[key] = result
        return result
    result = _compute(task, max_flops, max_bytes)
    _MEM[key] = result
    try:
        data = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        data = {}
    data[skey] = {"small": result[0] if result else [], "sweep": result[1] if result else []}
    try:
        from kstrata.atomic import write_atomic

        write_atomic(path, json.dumps(data, sort_keys=True))
    except OSError:
        pass
    return result


def _compute(task: Any, max_flops: float, max_bytes: float) -> tuple[list[dict[str, int]], list[dict[str, int]]] | None:
    nominal = task.full_shape(None)
    fitted = _fit(task, max_flops, max_bytes)
    if fitted is None or fitted == nominal or not _runs(task, fitted):
        return None
    scaled = [k for k in fitted if fitted[k] != nominal[k]]

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
    return [odd], sweep


def describe(task: Any) -> str | None:
    """One line naming the scaled test shapes of ``task`` (None when not scaled)."""
    got = scaled_shapes(task)
    if not got:
        return None
    nominal = task.full_shape(None)
    fit = got[1][0]
    changed = ", ".join(f"{k}={fit[k]} (nominal {nominal[k]})" for k in fit if fit[k] != nominal[k])
    return (f"tests run at shapes scaled to this CPU: {changed}, plus boundary variants; "
            f"{ENV}=nominal uses the nominal shape")
