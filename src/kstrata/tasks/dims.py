"""Shape variation for tasks that declare no size variables (issue #17 item 3).

A KernelBench file may write its shapes as literals (``torch.rand(64, 512)``
in ``get_inputs()``, no module globals): then there is nothing to rebind and
every test would run the one nominal shape, which a tail-mask bug (wrong only
when an extent is not a multiple of the block size) passes. For such a task
kstrata infers symbolic dimensions from one ``get_inputs()`` draw:

* every distinct extent >= :data:`MIN_VARIED` among the input tensors' dims is
  one dimension; equal extents (across inputs or within one) are *tied* and
  move together. The dimension is named by a reserved shape key, ``"@" +
  nominal extent`` (``"@512"``), which no module global can spell;
* a shape carrying such keys resizes the tensors ``get_inputs()`` returns:
  :func:`wrap_get_inputs` replaces the module's ``get_inputs`` with one that
  calls the original and redraws each affected tensor at the new extents with
  the same kind of distribution (values in [0, 1): ``torch.rand``; other
  floats: ``torch.randn`` scaled to the draw's standard deviation; integers:
  ``torch.randint`` over the draw's range; booleans: fair coin), from the
  global RNG the caller seeded;
* each dimension moves to boundary values (:func:`boundary_values`: 1, a
  prime, 2^k - 1 and 2^k + 1 at most the nominal extent); the shapes at which
  the reference does not run (e.g. a weight with a literal size) are dropped
  (:func:`kstrata.tasks.scaling.reference_runs`).

Tasks with size variables or ``shapes`` metadata are left as they are.
"""

from __future__ import annotations

from functools import wraps
from types import ModuleType
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from kstrata.tasks.base import Task

#: Extents below this are never varied (channel counts such as 3, kernel
#: sizes, heads): they are parameters of the operation more than sizes.
MIN_VARIED = 8
#: Prefix of the reserved shape keys of inferred dimensions.
PREFIX = "@"
#: Cap of the public (small) shapes' extents: cheap, and not a multiple of
#: any power-of-two block size (2^5 + 1).
SMALL_EXTENT = 33

_CACHE: dict[tuple[str, str], tuple[list[dict[str, int]], list[dict[str, int]]] | None] = {}


def is_dim_key(name: str) -> bool:
    """Whether ``name`` is a reserved key of an inferred dimension (``"@512"``)."""
    return name.startswith(PREFIX)


def split_shape(shape: dict[str, int] | None) -> tuple[dict[str, int], dict[int, int]]:
    """``(module globals, {nominal extent: new extent})`` of a shape."""
    plain, dims = {}, {}
    for k, v in (shape or {}).items():
        if is_dim_key(k):
            dims[int(k[len(PREFIX):])] = int(v)
        else:
            plain[k] = v
    return plain, dims


def _redraw(x: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    if x.device.type == "meta":  # shapes only (kstrata.tasks.work measures work on meta)
        return torch.empty(shape, dtype=x.dtype, device="meta")
    if x.dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if x.is_floating_point():
        xd = x.double()
        if x.numel() and float(xd.min()) >= 0 and float(xd.max()) <= 1:
            new = torch.rand(shape, dtype=torch.float64)
        else:
            std = float(xd.std()) if x.numel() > 1 else 1.0
            new = torch.randn(shape, dtype=torch.float64) * (std if std > 0 else 1.0)
        return new.to(x.dtype)
    if x.is_complex():
        return torch.randn(shape, dtype=x.dtype)
    lo, hi = (int(x.min()), int(x.max())) if x.numel() else (0, 1)
    return torch.randint(lo, hi + 1, shape, dtype=x.dtype)


def resize_inputs(inputs: list[Any], dims: dict[int, int]) -> list[Any]:
    """``inputs`` with every tensor extent ``e`` in ``dims`` changed to
    ``dims[e]`` (redrawn, see the module docstring); others returned as is."""
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and any(e in dims for e in x.shape):
            x = _redraw(x, tuple(dims.get(e, e) for e in x.shape)).to(x.device)
        out.append(x)
    return out


def wrap_get_inputs(module: ModuleType, dims: dict[int, int]) -> None:
    """Make ``module.get_inputs()`` return inputs resized to ``dims``."""
    if not dims:
        return
    original = module.get_inputs

    @wraps(original)
    def get_inputs() -> list[Any]:
        return resize_inputs(list(original()), dims)

    module.get_inputs = get_inputs


def inferred_dims(task: "Task") -> dict[str, int]:
    """Reserved key -> nominal extent of the dims of a literal-shaped task
    (``{}`` when the task has size variables or shapes metadata)."""
    from kstrata.tasks.base import int_globals

    s = task.meta.shapes
    if s.nominal or s.small or s.sweep or int_globals(task.source):
        return {}
    try:
        module = task.load_module(None)
        torch.manual_seed(1)
        xs = list(module.get_inputs())
    except Exception:  # noqa: BLE001 - a task that does not run has no dims to infer
        return {}
    extents = sorted({int(e) for x in xs if isinstance(x, torch.Tensor) for e in x.shape if e >= MIN_VARIED})
    return {f"{PREFIX}{e}": e for e in extents}


def _prime_below(n: int) -> int | None:
    for p in range(n - 1, 1, -1):
        if all(p % d for d in range(2, int(p**0.5) + 1)):
            return p
    return None


def boundary_values(n: int) -> dict[str, int]:
    """Boundary extents for a dimension of nominal extent ``n`` (all <= n,
    none equal to n): ``one`` (1), ``prime`` (largest prime < n),
    ``pow2m1`` / ``pow2p1`` (2^k - 1 and 2^k + 1 for the largest 2^k < n),
    ``small`` (:data:`SMALL_EXTENT`, or the largest prime < n below it)."""
    out = {"one": 1}
    p = _prime_below(n)
    if p:
        out["prime"] = p
    k = 1 << max(1, (n - 1).bit_length() - 1)
    if k - 1 > 1:
        out["pow2m1"] = k - 1
    if k + 1 < n:
        out["pow2p1"] = k + 1
    small = SMALL_EXTENT if n > SMALL_EXTENT else _prime_below(n)
    if small:
        out["small"] = small
    return out


def inferred_shapes(task: "Task") -> tuple[list[dict[str, int]], list[dict[str, int]]] | None:
    """``(small, sweep)`` shapes of a literal-shaped task, or ``None`` when the
    task has size variables, shapes metadata or no extent to vary.

    ``small`` (public): every dim at its ``small`` value, then every dim at 1.
    ``sweep`` (hidden): every dim at its ``prime``, ``pow2p1``, ``pow2m1``
    value in turn, dims alternately at 1 and nominal, and the nominal shape.
    Shapes at which the reference does not run are dropped; the result is
    cached per task file and content.
    """
    from kstrata.tasks.scaling import reference_runs

    key = (str(task.path), task.digest)
    if key in _CACHE:
        return _CACHE[key]
    dims = inferred_dims(task)
    result = None
    if dims:
        bounds = {k: boundary_values(n) for k, n in dims.items()}

        def at(kind: str) -> dict[str, int]:
            return {k: b.get(kind, dims[k]) for k, b in bounds.items()}

        names = list(dims)
        small = [at("small"), at("one")]
        sweep = [at("prime"), at("pow2p1"), at("pow2m1"),
                 {k: 1 if i % 2 == 0 else dims[k] for i, k in enumerate(names)}, dict(dims)]
        small = _unique([s for s in small if reference_runs(task, s)])
        sweep = _unique([s for s in sweep if reference_runs(task, s)])
        if any(s != dims for s in small + sweep):
            result = (small or [dict(dims)], sweep or [dict(dims)])
    _CACHE[key] = result
    return result


def _unique(shapes: list[dict[str, int]]) -> list[dict[str, int]]:
    out: list[dict[str, int]] = []
    for s in shapes:
        if s not in out:
            out.append(s)
    return out


def input_shapes(task: "Task", shape: dict[str, int] | None) -> list[tuple[int, ...]]:
    """The shapes of the tensors ``get_inputs()`` returns at ``shape``."""
    module = task.load_module(shape)
    torch.manual_seed(1)
    return [tuple(x.shape) for x in module.get_inputs() if isinstance(x, torch.Tensor)]


def variation_note(task: "Task") -> str | None:
    """Why the task's tests cannot vary shapes, or ``None`` when they do: every
    small and sweep shape equals the nominal shape (a task whose sizes are
    literals and not inferable, or a KernelBench file with size variables but
    no ``shapes`` metadata)."""
    kind = variation_kind(task)
    if kind == "ok":
        return None
    if kind == "hidden only":
        moved = sorted(k for k, v in task.full_shape(None).items() if v > 8)
        return ("public tests run the nominal shape only: every small and sweep shape is the nominal shape; "
                f"the hidden tests move {', '.join(moved)} by a few (by the run's secret) and to 1, but no "
                "boundary sweep (1, primes, non-multiples of a block) is listed and a failure cannot be "
                "located at a public shape; add shapes.small/shapes.sweep metadata")
    return ("no shape variation: every small and sweep shape is the nominal shape, so "
            "shape-specific bugs (tails, boundaries) go unseen; add shapes.small/shapes.sweep "
            "metadata")


def variation_kind(task: "Task") -> str:
    """``"ok"`` (small or sweep shapes differ from the nominal one), ``"hidden
    only"`` (they do not, but a shape variable above 8 lets the hidden stage's
    secret perturbations vary it: :func:`kstrata.verify.plan.perturbed_shapes`;
    newcomer nc14 read "NONE" for such a task whose hidden tests caught a tail
    bug) or ``"none"`` (no test varies any size)."""
    nominal = task.full_shape(None)
    if any(task.full_shape(s) != nominal for s in task.small_shapes + task.sweep_shapes):
        return "ok"
    return "hidden only" if any(v > 8 for v in nominal.values()) else "none"
