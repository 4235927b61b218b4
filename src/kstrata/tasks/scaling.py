"""Shapes scaled to the machine: a timing shape for CPU searches.

The suite's nominal shapes are KernelBench-sized for GPUs (e.g. a 4096³ fp32
GEMM, 137 GFLOP): on a 2-core CPU one eager call takes seconds and an
untuned TVM loop nest minutes, so a search that times every candidate there
would measure a handful per hour. :func:`fitted_shape` derives, from the
task's own FLOP and byte formulas, the largest shape at most the given size
by halving the nominal shape's largest dimensions; the result is
deterministic (no timing involved), so every run and baseline of a task uses
the same shape. Correctness is unaffected: the verifier still runs the
task's full sweep of boundary shapes.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from kstrata.tasks.scaled import halve_tied

#: Default limits of :func:`fitted_shape` on CPU: one forward call does at most
#: this many FLOPs and moves at most this many bytes (about 5 ms of eager
#: PyTorch on 2 cores of a current x86 server CPU).
CPU_MAX_FLOPS = 2.5e8
CPU_MAX_BYTES = 16e6
#: Dimensions below this are never halved (kernel sizes, head dims, small channel counts).
MIN_SCALED_DIM = 32


class ShapeFitError(ValueError):
    """The task gives no way to fit a shape (no FLOP or byte formula)."""


def _fits(task: Any, shape: dict[str, int], max_flops: float, max_bytes: float, work: Any = None) -> bool:
    f, b = work(shape) if work is not None else (task.flops(shape), task.bytes(shape))
    return (f is None or f <= max_flops) and (b is None or b <= max_bytes)


def measured_work(task: Any, shape: dict[str, int]) -> tuple[float, float]:
    """FLOPs and bytes of one reference call at ``shape``, for a task without
    formulas: :func:`kstrata.tasks.work.measured_work` (only on PyTorch's ``meta``
    device where the model runs there; cached on disk by task digest and shape).

    Raises
    ------
    kstrata.tasks.work.WorkError
        Where the reference cannot be measured.
    """
    from kstrata.tasks.work import measured_work as _measured

    return _measured(task, shape, real_run=False)


def reference_runs(task: Any, shape: dict[str, int]) -> bool:
    """Whether the task's reference instantiates and runs at ``shape``."""
    try:
        model, inputs, _, _ = task.instantiate(shape, 0)
        with torch.no_grad():
            model(*inputs)
        return True
    except Exception:  # noqa: BLE001 - a shape that breaks a task constraint is just not used
        return False


def fitted_shape(task: Any, max_flops: float = CPU_MAX_FLOPS, max_bytes: float = CPU_MAX_BYTES,
                 check: bool = True) -> dict[str, int]:
    """The task's nominal shape, largest dimensions halved until it fits.

    Each step halves (rounding down) the largest shape variable at or above
    :data:`MIN_SCALED_DIM`. With ``check`` the reference is run at the result;
    if it does not run there (e.g. a divisibility constraint broke), the
    halving is redone running the reference at every step, undoing a step
    that breaks it and freezing that variable. Where the work is measured
    (no formulas), a step at which the measurement fails is undone and its
    variable frozen too. A step that breaks the reference is first tried
    again with the variables the halved one is tied to
    (:func:`kstrata.tasks.scaled.halve_tied`: HingeLoss's ``batch_size``
    with ``input_shape[0]``); a global derived from a size at import
    (``bias_shape = (out_channels, 1, 1)``) follows it
    (:func:`kstrata.tasks.base.rebind_globals`). Stops when ``task.flops(shape) <= max_flops`` and
    ``task.bytes(shape) <= max_bytes`` or nothing is left to halve.

    Parameters
    ----------
    task:
        A :class:`kstrata.tasks.base.Task`.
    max_flops:
        FLOPs of one forward call (not GFLOP).
    max_bytes:
        Minimum bytes moved by one forward call (the task's byte formula).
    check:
        Instantiate and run the reference at each accepted step.

    Returns
    -------
    dict[str, int]
        A full shape (every variable); the nominal shape when it already fits.

    A task with neither a ``flops`` nor a ``bytes`` formula (a KernelBench
    file as it is) is fitted by the work of one reference call measured on
    PyTorch's ``meta`` device (:func:`measured_work`); where the reference
    cannot run there, the nominal shape is returned (with ``check``, the
    fitted shape is still run for real once).
    """
    work = None
    if task.meta.flops is None and task.meta.bytes is None:
        cache: dict[tuple, tuple[float, float]] = {}

        def work(shape: dict[str, int]) -> tuple[float, float]:
            key = tuple(sorted(shape.items()))
            if key not in cache:
                cache[key] = measured_work(task, shape)
            return cache[key]

        try:
            work(task.full_shape(None))
        except Exception:  # noqa: BLE001 - no meta run: time at the nominal shape
            return task.full_shape(None)
    shape = _halve(task, max_flops, max_bytes, check=False, work=work)
    if check and not reference_runs(task, shape):  # rare: a constraint broke on the way; walk it again, checking
        shape = _halve(task, max_flops, max_bytes, check=True, work=work)
    return shape


def _halve(task: Any, max_flops: float, max_bytes: float, check: bool, work: Any = None) -> dict[str, int]:
    shape = task.full_shape(None)
    frozen: set[str] = set()
    while not _fits(task, shape, max_flops, max_bytes, work):
        cands = [k for k, v in shape.items() if v >= MIN_SCALED_DIM and k not in frozen]
        if not cands:
            break
        var = max(cands, key=lambda k: (shape[k], k))

        def works(trial: dict[str, int]) -> bool | None:
            if check and not reference_runs(task, trial):
                return None
            if work is not None:
                work(trial)  # raises where the reference does not run there
            return True

        # alone, else with the variables it is tied to (HingeLoss: batch_size with input_shape[0])
        done = halve_tied(shape, var, cands, works, pairs=work is not None)
        if done is None:
            frozen.add(var)
            continue
        shape = done[0]
    return shape


def auto_shape_option(device: str) -> str:
    """What ``--timing-shape auto`` means on ``device``: ``fit`` on CPUs (the
    GPU-sized nominal shape costs seconds per call there), ``nominal`` on GPUs."""
    return "nominal" if str(device).startswith("cuda") else "fit"


def timing_shape_for(option: str, task: Any, device: str) -> dict[str, int]:
    """The full shape a candidate of ``task`` is timed at on ``device`` for a
    ``--timing-shape`` value: ``auto`` is :func:`auto_shape_option` (``fit`` on
    CPUs, ``nominal`` on GPUs), anything else :func:`parse_shape_option`.
    ``kstrata eval``, ``optimize``, ``bench`` and the MCP server all choose
    through this one function, so they time at the same shape.

    Raises
    ------
    ValueError, ShapeFitError
        On a malformed value or an unknown shape variable; a
        :class:`kstrata.tasks.base.TaskError` where the task's formulas fail.
    """
    if option.strip() == "auto":
        option = auto_shape_option(device)
    return parse_shape_option(option, task)


#: The largest size a ``NAME=INT`` item takes (int32's largest), and the largest
#: product of a shape's sizes: ``B=99999999999999999999`` (past int64) ended
#: ``eval`` in a TypeError traceback inside the judge (red-team rt57).
MAX_SHAPE_SIZE = 2**31 - 1
MAX_SHAPE_ELEMENTS = 2**56


def parse_shape_option(text: str, task: Any, rest: dict[str, int] | None = None) -> dict[str, int]:
    """A ``--timing-shape`` value: ``nominal``, ``fit`` (:func:`fitted_shape`
    with the CPU limits) or ``NAME=INT,...`` (the other variables from
    ``rest``, e.g. a run's timed shape, else nominal).

    Raises
    ------
    ValueError
        On a malformed item or an unknown variable (the message lists the task's variables).
    """
    text = text.strip()
    if text in ("", "nominal"):
        return task.full_shape(None)
    if text == "fit":
        return fitted_shape(task)
    names = task.full_shape(None)
    out = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not value.strip().lstrip("-").isdigit():
            raise ValueError(f"shape item {item!r} is not NAME=INT (or use 'nominal' or 'fit')")
        if key not in names:
            raise ValueError(f"task {task.name} has no shape variable {key!r}; it has {', '.join(names)}")
        if key in out:  # the later one silently won (red-team rt57)
            raise ValueError(f"shape item {item!r}: {key} is given twice; give each variable once")
        if int(value) < 1:
            raise ValueError(f"shape item {item!r}: sizes must be at least 1")
        if int(value) > MAX_SHAPE_SIZE:
            raise ValueError(f"shape item {item!r}: sizes must be at most {MAX_SHAPE_SIZE}")
        out[key] = int(value)
    full = task.full_shape({**(rest or {}), **out})
    if math.prod(int(v) for v in full.values() if isinstance(v, int)) > MAX_SHAPE_ELEMENTS:
        raise ValueError(f"shape {', '.join(f'{k}={v}' for k, v in full.items())}: its sizes multiply to more "
                         f"than 2^56 elements (a tensor's bytes must fit 64 bits); give smaller sizes")
    return full
