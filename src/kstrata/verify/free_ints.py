"""Which integer inputs of one value a hidden test moves (red-team rt58).

A dequantization's zero point is an input of one value (``torch.tensor([3])``) that no
distribution draws: it was 3 in every test, so a kernel with 3 written in, the zero-point
input never read, read correct on every test on every backend. Floating inputs of one value
were already moved on hidden tests (:func:`kstrata.tasks.inputs.vary_scalars`); an integer
one may be structure instead of a value (a count, an index, a ``dim``), so it is moved only
where the reference reads it as a value: at the task's smallest shapes the reference,
given each end of the range a hidden test may move it to (:func:`kstrata.tasks.inputs.move_int`),
runs without error, gives outputs of the same structure, shapes and dtypes, no more
non-finite values, and a different output for at least one of them.

A hidden test at whose shape the reference cannot take the moved value (an index moved past the
end of a size-3 dimension, where the probed shapes had room) keeps the task's value there
(:meth:`kstrata.verify.runner.ShapeRun.prepare`; on a GPU an out-of-range index is a device-side
assert, which no process survives: such a task should name the input in ``fixed_inputs``).

Candidates: integer tensors of one value (:func:`kstrata.tasks.inputs.int_value`), floating
inputs that are exactly zero (a float zero point of 0.0: one element, or a Python float; scaling,
which moves the other floats, leaves a zero where it is), and Python
ints that the task names free (``TaskMeta.free_inputs``) or whose ``forward`` argument is named
as a zero point (``zero_point``, ``x_zero_point``, ``zp``, ``z``; a Python int is usually a ``dim`` or
a size, which the task fixes). ``TaskMeta.fixed_inputs`` are never moved.
"""

from __future__ import annotations

import inspect
import math
import re
from typing import Any

import torch

from kstrata.tasks.base import Task
from kstrata.tasks.inputs import int_value, move_int

#: a forward argument named as a quantization zero point
ZERO_POINT_NAME = re.compile(r"(^|_)(z|zero|zero_?points?|zps?)($|_)", re.IGNORECASE)
#: the ends of the range :func:`move_int` draws from (its ``r``), tried at each probed shape
PROBE_MOVES = (0.0, 1.0)

_CACHE: dict[str, tuple[int, ...]] = {}


def free_int_inputs(task: Task) -> tuple[int, ...]:
    """Indices into ``get_inputs()`` of the integer inputs of one value a hidden test moves
    (see the module's docstring), decided once per task text.

    Parameters
    ----------
    task:
        The task; its reference is run at its first two small shapes (else the nominal one)
        on the CPU, with the public draw of seed 0.

    Returns
    -------
    tuple of int
        The indices, ascending; empty where there are none, or the reference does not build.
    """
    key = task.digest
    if key not in _CACHE:
        _CACHE[key] = _probe(task)
    return _CACHE[key]


def _probe(task: Task) -> tuple[int, ...]:
    shapes = list(task.small_shapes[:2]) or [task.nominal_shape]
    keep: set[int] | None = None
    moved: set[int] = set()
    for shape in shapes:
        try:
            with torch.random.fork_rng(devices=[]), torch.no_grad():
                model, xs, _, _ = task.instantiate(shape, 0)
                candidates = _candidates(task, model, xs)
                if not candidates:  # most tasks: no reference call
                    return ()
                base = _outputs(model, xs)
        except Exception:  # noqa: BLE001 - a reference that does not run is reported elsewhere
            return ()
        here = set()
        for i in candidates:
            ok, changed = _reads_as_value(model, xs, i, base)
            if ok:
                here.add(i)
                if changed:
                    moved.add(i)
        keep = here if keep is None else keep & here
    return tuple(sorted((keep or set()) & moved))


def _candidates(task: Task, model: torch.nn.Module, xs: list[Any]) -> list[int]:
    names = _forward_names(model)
    out = []
    for i, x in enumerate(xs):
        if i in task.meta.fixed_inputs or int_value(x) is None:
            continue
        if type(x) is int and i not in task.meta.free_inputs and not (
                i < len(names) and ZERO_POINT_NAME.search(names[i])):
            continue
        out.append(i)
    return out


def _forward_names(model: torch.nn.Module) -> list[str]:
    try:
        params = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _outputs(model: torch.nn.Module, xs: list[Any]) -> list[Any]:
    from kstrata.verify.runner import flatten

    ins = [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]
    torch.manual_seed(0)  # a forward that draws (dropout) draws alike in every call
    return [o.detach() if isinstance(o, torch.Tensor) else o for o in flatten(model(*ins))]


def _reads_as_value(model: torch.nn.Module, xs: list[Any], i: int, base: list[Any]) -> tuple[bool, bool]:
    """(every probed move of input ``i`` keeps the reference running with outputs alike,
    at least one changes them)."""
    changed = False
    for r in PROBE_MOVES:
        ys = list(xs)
        ys[i] = move_int(xs[i], r)
        try:
            with torch.random.fork_rng(devices=[]), torch.no_grad():
                outs = _outputs(model, ys)
        except Exception:  # noqa: BLE001 - out of range for the reference: structure, not a value
            return False, False
        if len(outs) != len(base):
            return False, False
        for o, b in zip(outs, base):
            if isinstance(o, torch.Tensor) != isinstance(b, torch.Tensor):
                return False, False
            if not isinstance(o, torch.Tensor):
                changed |= repr(o) != repr(b)
                continue
            if o.shape != b.shape or o.dtype != b.dtype:
                return False, False
            if o.is_floating_point() or o.is_complex():
                if int((~torch.isfinite(o)).sum()) > int((~torch.isfinite(b)).sum()):
                    return False, False
            changed |= not torch.equal(o, b)
    return True, changed


def moved_input_names(task: Task) -> list[str]:
    """The ``forward`` argument names (``input i`` where there is none) of the inputs a hidden
    test gives other values than ``get_inputs()`` does: the integers of :func:`free_int_inputs`
    and the floats of one value (:func:`kstrata.tasks.inputs.vary_scalars`), at the task's first
    small shape. For the feedback on a hidden failure: a kernel with such a value written in
    fails there, and the agent sees the public tests only. Empty when the reference does not build."""
    from kstrata.tasks.inputs import _one_value

    shape = task.small_shapes[0] if task.small_shapes else task.nominal_shape
    try:
        with torch.random.fork_rng(devices=[]):
            model, xs, _, _ = task.instantiate(shape, 0)
    except Exception:  # noqa: BLE001 - a reference that does not build is reported elsewhere
        return []
    ints = set(free_int_inputs(task))
    names = _forward_names(model)
    out = []
    for i, x in enumerate(xs):
        if i in task.meta.fixed_inputs:
            continue
        if type(x) is float:
            scaled = x != 0 and math.isfinite(x)
        else:
            scaled = isinstance(x, torch.Tensor) and x.is_floating_point() and (
                x.numel() == 1 and float(x.reshape(-1)[0]) != 0 or x.numel() > 1 and _one_value(x))
        if i in ints or scaled:
            out.append(names[i] if i < len(names) else f"input {i}")
    return out

