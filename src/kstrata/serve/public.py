"""What an outside agent may see: the public view of a task and of an evaluation.

DESIGN.md: "the agent sees public shapes and seeds only; the verdict that counts
uses hidden shapes, seeds and distributions derived from a per-run secret".
Two guards keep that true for everything :mod:`kstrata.serve` returns:

* :func:`public_task` shows the reference source with the ``sweep`` shapes
  (the seed of the hidden set) removed from its ``KSTRATA`` metadata, plus the
  small (public) and nominal shapes, dtype, tolerance, FLOPs and bytes.
* :func:`redact_hidden` walks any JSON-able result and replaces every hidden
  shape (as a mapping, or written out in text) and every hidden seed with
  ``"<hidden>"``, whatever the verifier put in its evidence; hidden-stage
  evidence also loses its element counts
  (:func:`kstrata.verify.feedback.scrub_hidden`).
"""

from __future__ import annotations

import ast
import pprint
import re
from typing import Any

from kstrata.pysyntax import parse_module
from kstrata.tasks.loader import metadata_assigns
from kstrata.store.records import jsonable
from kstrata.tasks.base import Task

HIDDEN = "<hidden>"


def public_source(task: Task) -> str:
    """``task.source`` with ``shapes.sweep`` dropped from a ``KSTRATA`` literal.

    A file without inline metadata is returned unchanged (a sidecar TOML is
    never shown).
    """
    source = task.source
    try:
        tree = parse_module(source)
    except SyntaxError:
        return source
    for node in metadata_assigns(tree):
        try:
            meta = ast.literal_eval(node.value)
        except ValueError:
            return source
        shapes = meta.get("shapes") if isinstance(meta, dict) else None
        if not isinstance(shapes, dict) or "sweep" not in shapes:
            return source
        shapes.pop("sweep")
        lines = source.splitlines(keepends=True)
        text = "# hidden test shapes are not shown\nKSTRATA = " + pprint.pformat(
            meta, sort_dicts=False, width=96
        ) + "\n"
        return "".join(lines[: node.lineno - 1]) + text + "".join(lines[node.end_lineno :])
    return source


def _tolerance_text(task: Task) -> str:
    tol = task.meta.tolerance
    if tol.kind == "quant":
        return f"cosine >= {tol.cosine}, relative L1 <= {tol.rel_l1}, relative RMSE <= {tol.rmse}"
    if tol.kind == "exact":
        return "outputs must be exactly equal"
    text = (
        f"max error against a float64 oracle <= max(floor={tol.floor}, {tol.k} x the "
        "task-dtype reference's own error) + a dtype bound"
    )
    if tol.atol is not None or tol.rtol is not None:
        text += f" (atol={tol.atol}, rtol={tol.rtol})"
    return text


def _shape_row(task: Task, shape: dict[str, int]) -> dict[str, Any]:
    full = task.full_shape(shape)
    return {
        "shape": full,
        "flops": task.flops(full),
        "bytes": task.bytes(full),
        "arithmetic_intensity": task.arithmetic_intensity(full),
    }


def task_summary(task: Task) -> dict[str, Any]:
    """One line of ``list_tasks``: name, level, category, dtype, description."""
    m = task.meta
    return {
        "name": task.name,
        "level": m.level,
        "category": m.category,
        "dtype": m.dtype,
        "description": task.description,
    }


def public_task(task: Task, backend_levels: tuple[str, ...] | None = None,
                timed_shape: dict[str, int] | None = None) -> dict[str, Any]:
    """The public contract of ``task`` as JSON-able data.

    Returns
    -------
    dict
        ``name``, ``level``, ``category``, ``dtype``, ``description``,
        ``reference_source`` (sweep shapes removed), ``nominal`` and
        ``public_shapes`` (each with ``flops``, ``bytes``, ``arithmetic_intensity``;
        FLOP and byte counts are per forward call), ``public_seeds``,
        ``distributions``, ``tolerance`` (policy and text), ``precision``,
        ``flops_formula``/``bytes_formula`` and, when given, ``levels`` (the
        source levels a candidate of the chosen backend has), and ``timed``
        (the ``timed_shape`` row, where given: the shape a correct candidate
        is timed at, :func:`kstrata.tasks.scaling.timing_shape_for`; on a CPU
        not the GPU-sized nominal one).
    """
    m = task.meta
    try:
        from kstrata.verify.plan import PUBLIC_SEEDS

        seeds: list[int] | None = list(PUBLIC_SEEDS)
    except ImportError:  # the verifier's test plan not installed yet
        seeds = None
    out = task_summary(task) | {
        "reference_source": public_source(task),
        "nominal": _shape_row(task, task.nominal_shape),
        "public_shapes": [_shape_row(task, s) for s in task.small_shapes],
        "public_seeds": seeds,
        "distributions": list(m.distributions),
        "tolerance": m.tolerance.model_dump() | {"text": _tolerance_text(task)},
        "precision": m.precision.model_dump(),
        "flops_formula": m.flops,
        "bytes_formula": m.bytes,
        "hidden_tests": "the verdict also runs hidden shapes, seeds and distributions "
        "derived from a per-run secret; they are never shown",
    }
    if backend_levels is not None:
        out["levels"] = list(backend_levels)
    if timed_shape is not None:
        out["timed"] = _shape_row(task, timed_shape)
    return out


def hidden_markers(task: Task, secret: str | bytes) -> tuple[list[dict[str, int]], set[int]]:
    """Hidden shapes (full, not public) and hidden seeds of ``task`` under ``secret``.

    Uses the verifier's test plan (:mod:`kstrata.verify.plan`); without it,
    the sweep shapes alone.
    """
    public = [task.full_shape(s) for s in task.small_shapes] + [task.nominal_shape]
    shapes: list[dict[str, int]] = [task.full_shape(s) for s in task.sweep_shapes]
    seeds: set[int] = set()
    try:
        from kstrata.verify import plan
    except ImportError:
        plan = None  # type: ignore[assignment]
    if plan is not None:
        extra = plan.perturbed_shapes(task, secret)
        shapes += [task.full_shape(s) for s in extra]
        for case in plan.hidden_tests(task, secret, extra):
            seeds.add(case.seed)
            seeds.add(case.param_seed)
    seeds -= set(getattr(plan, "PUBLIC_SEEDS", ())) if plan is not None else set()
    hidden = [s for s in shapes if s not in public]
    unique: list[dict[str, int]] = []
    for s in hidden:
        if s not in unique:
            unique.append(s)
    return unique, seeds


def _shape_patterns(shape: dict[str, int]) -> list[re.Pattern[str]]:
    values = [str(v) for v in shape.values()]
    pats = []
    if len(values) > 1:  # "(127, 1001)", "127x1001", "[127, 1001]"
        pats.append(re.compile(r"(?<!\d)" + r"\s*[,x×]\s*".join(values) + r"(?!\d)"))
    items = [rf"['\"]?{re.escape(k)}['\"]?\s*[=:]\s*{v}(?!\d)" for k, v in shape.items()]
    pats.append(re.compile(r"\W+".join(items)))
    return pats


def redact_hidden(obj: Any, task: Task, secret: str | bytes) -> Any:
    """``obj`` (made JSON-able) with hidden shapes and seeds replaced by ``"<hidden>"``.

    A mapping equal to a hidden shape (or to one with only the hidden shape's
    variables), an integer equal to a hidden seed, and text that spells out a
    hidden shape (``B=127, D=1001`` or ``(127, 1001)``) or a hidden seed are
    all redacted.
    """
    shapes, seeds = hidden_markers(task, secret)
    patterns = [p for s in shapes for p in _shape_patterns(s)]
    if seeds:  # hidden seeds are large random integers: any mention is redacted
        patterns.append(re.compile(r"(?<!\d)(?:" + "|".join(str(x) for x in sorted(seeds)) + r")(?!\d)"))
    shape_items = [set(s.items()) for s in shapes]
    if isinstance(obj, dict):  # hidden-stage evidence: no element counts either
        from kstrata.verify.feedback import scrub_hidden

        obj = scrub_hidden(jsonable(obj))

    def walk(x: Any) -> Any:
        if isinstance(x, bool) or x is None or isinstance(x, float):
            return x
        if isinstance(x, int):
            return HIDDEN if x in seeds else x
        if isinstance(x, str):
            for p in patterns:
                x = p.sub(HIDDEN, x)
            return x
        if isinstance(x, dict):
            ints = {(k, v) for k, v in x.items() if isinstance(v, int) and not isinstance(v, bool)}
            if ints and len(ints) == len(x) and any(ints <= s or s <= ints for s in shape_items):
                return HIDDEN
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return walk(jsonable(obj))
