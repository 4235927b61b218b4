"""The task contract: a KernelBench-format module plus :class:`TaskMeta`.

A task module defines ``Model(torch.nn.Module)``, ``get_inputs()`` and
``get_init_inputs()`` (KernelBench, Ouyang et al. 2025). Its sizes are module
globals; kstrata rebinds them to run other shapes (see :mod:`kstrata.tasks.meta`).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import itertools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from kstrata.tasks import dims, scaled, work
from kstrata.tasks.formula import eval_formula
from kstrata.tasks.meta import TaskMeta

_counter = itertools.count()


class TaskError(ValueError):
    """A task file that cannot be used; the message names the file and the fix."""


class ReferenceFailure(TaskError):
    """The task's own reference (or its float64 oracle) cannot run as a
    verification needs: out of memory, or too slow for the time limit at the
    chosen shapes. Never a candidate's fault; the message names the reference,
    the shape and what to change (``--timeout``, the shapes)."""


def import_module_from_path(path: Path, prefix: str = "kstrata_task") -> ModuleType:
    """Import ``path`` as a fresh, uniquely named module (never cached in
    ``sys.modules`` under a shared name, so shape rebinding cannot leak between
    instances).

    Raises
    ------
    TaskError
        If the file is missing or raises while importing.
    """
    path = Path(path)
    if not path.is_file():
        raise TaskError(f"{path}: no such file")
    name = f"{prefix}_{path.stem}_{next(_counter)}".replace("-", "_").replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TaskError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - report any import failure as data
        sys.modules.pop(name, None)
        raise TaskError(f"{path}: failed to import: {type(e).__name__}: {e}") from e
    return module


def int_globals(source: str) -> dict[str, int]:
    """Module-level ``NAME = <int literal>`` assignments in ``source``, in order.

    These are a KernelBench file's size variables (``batch_size = 16``).
    """
    out: dict[str, int] = {}
    for node in ast.parse(source).body:
        if (
            isinstance(node, ast.Assign)
            and all(isinstance(t, ast.Name) for t in node.targets)
        ):  # ``height = width = 128`` binds two size variables
            value = node.value
            if isinstance(value, ast.Constant) and type(value.value) is int:
                for t in node.targets:
                    out[t.id] = value.value
            elif isinstance(value, ast.BinOp):  # e.g. 1024 * 4
                try:
                    v = eval_formula(ast.unparse(value), dict(out))
                except Exception:  # noqa: BLE001 - not a size expression
                    continue
                if float(v).is_integer():
                    for t in node.targets:
                        out[t.id] = int(v)
    return out


@dataclass(frozen=True)
class Task:
    """One task: what to compute and how it is judged.

    Attributes
    ----------
    name:
        Unique name within its suite or directory (the file stem, or the
        KernelBench stem such as ``1_Square_matrix_multiplication_``).
    path:
        The task module.
    meta:
        Validated metadata (defaults when the file has none).
    source:
        The module's text, as shown to agents (public).
    """

    name: str
    path: Path
    meta: TaskMeta
    source: str = field(repr=False)

    @property
    def level(self) -> int:
        return self.meta.level

    @property
    def category(self) -> str:
        return self.meta.category

    @property
    def digest(self) -> str:
        """sha256 of the task file's text (part of every cache key)."""
        return hashlib.sha256(self.source.encode()).hexdigest()

    # -- shapes ------------------------------------------------------------
    @property
    def nominal_shape(self) -> dict[str, int]:
        """The benchmark shape: metadata ``shapes.nominal`` or the file's globals."""
        return dict(self.meta.shapes.nominal) or int_globals(self.source)

    @property
    def small_shapes(self) -> list[dict[str, int]]:
        """Shapes cheap enough for tests; for a task with literal shapes the
        inferred ones (:mod:`kstrata.tasks.dims`); falls back to the nominal shape."""
        if self.meta.shapes.small:
            return [dict(s) for s in self.meta.shapes.small]
        fitted = scaled.scaled_shapes(self)  # GPU-sized plain files on a CPU (tasks.scaled)
        if fitted:
            return [dict(s) for s in fitted[0]]
        inferred = dims.inferred_shapes(self)
        return [dict(s) for s in inferred[0]] if inferred else [self.nominal_shape]

    @property
    def sweep_shapes(self) -> list[dict[str, int]]:
        """Boundary shapes for hidden verification; for a task with literal
        shapes the inferred ones; falls back to the small set."""
        if self.meta.shapes.sweep:
            return [dict(s) for s in self.meta.shapes.sweep]
        fitted = None if self.meta.shapes.small else scaled.scaled_shapes(self)
        if fitted:
            return [dict(s) for s in fitted[1]]
        inferred = None if self.meta.shapes.small else dims.inferred_shapes(self)
        return [dict(s) for s in inferred[1]] if inferred else self.small_shapes

    def full_shape(self, shape: dict[str, int] | None) -> dict[str, int]:
        """``shape`` completed with nominal values for variables it leaves out."""
        out = self.nominal_shape
        out.update(shape or {})
        return out

    # -- instantiation -----------------------------------------------------
    def load_module(self, shape: dict[str, int] | None = None) -> ModuleType:
        """A fresh import of the task module with ``shape`` bound into its globals.

        Raises
        ------
        TaskError
            If the module fails to import or ``shape`` names an unknown variable.
        """
        module = import_module_from_path(self.path)
        plain, resized = dims.split_shape(shape)
        for name, value in plain.items():
            if not hasattr(module, name):
                raise TaskError(f"{self.path}: shape variable {name!r} is not a module global")
            setattr(module, name, value)
        dims.wrap_get_inputs(module, resized)  # inferred dims ("@512": 33) resize get_inputs()
        return module

    def instantiate(
        self, shape: dict[str, int] | None = None, seed: int = 0
    ) -> tuple[torch.nn.Module, list[Any], list[Any], ModuleType]:
        """Build the reference at ``shape`` with a seeded RNG.

        Returns
        -------
        (model, inputs, init_inputs, module)
            ``model`` in eval mode on CPU with its parameters drawn after
            ``torch.manual_seed(seed)``; ``inputs`` from ``get_inputs()`` drawn
            after ``torch.manual_seed(seed + 1)``.
        """
        module = self.load_module(shape)
        torch.manual_seed(seed)
        init_inputs = list(module.get_init_inputs())
        model = module.Model(*init_inputs).eval()
        torch.manual_seed(seed + 1)
        inputs = list(module.get_inputs())
        return model, inputs, init_inputs, module

    # -- roofline counts ---------------------------------------------------
    def flops(self, shape: dict[str, int] | None = None) -> float | None:
        """FLOPs of one forward call at ``shape``: the ``flops`` formula, else
        measured from one reference call (:func:`kstrata.tasks.work.measured_work`,
        cached); None when neither is available."""
        if self.meta.flops is None:
            w = work.work_or_none(self, shape)
            return None if w is None else w[0]
        return eval_formula(self.meta.flops, self.full_shape(shape))

    def bytes(self, shape: dict[str, int] | None = None) -> float | None:
        """Minimum bytes moved by one forward call at ``shape``: the ``bytes``
        formula, else measured (inputs, outputs, parameters, buffers once;
        :func:`kstrata.tasks.work.measured_work`); None when neither is available."""
        if self.meta.bytes is None:
            w = work.work_or_none(self, shape)
            return None if w is None else w[1]
        return eval_formula(self.meta.bytes, self.full_shape(shape))

    def arithmetic_intensity(self, shape: dict[str, int] | None = None) -> float | None:
        """FLOP per byte at ``shape``, or None if either count is unknown."""
        f, b = self.flops(shape), self.bytes(shape)
        if f is None or not b:
            return None
        return f / b
