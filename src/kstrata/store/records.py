"""Plain rows of a run store, and the JSON conversion every stored blob goes through."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON data: dataclasses, pydantic models, enums, paths,
    numpy scalars/arrays, sets and tuples are converted; non-finite floats become
    ``None``; anything else unknown becomes its ``repr`` (never raises)."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, enum.Enum):
        return jsonable(obj.value)
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return [jsonable(v) for v in items]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    for method in ("model_dump", "to_dict", "tolist", "item"):
        fn = getattr(obj, method, None)
        if callable(fn):
            try:
                return jsonable(fn())
            except Exception:  # noqa: BLE001 - fall through to repr
                break
    return repr(obj)


def dumps(obj: Any) -> str:
    """Compact, key-sorted JSON of :func:`jsonable` ``(obj)``."""
    return json.dumps(jsonable(obj), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Speedup:
    """Speedup against one baseline (baseline time / candidate time) with its
    bootstrap confidence interval (``None`` bounds when not computed)."""

    baseline: str
    value: float
    ci_low: float | None = None
    ci_high: float | None = None


@dataclass
class EvaluationRecord:
    """What verification said about one candidate."""

    verdict: str
    check: str | None = None
    evidence: Any = None
    feedback: Any = None
    n_public: int | None = None
    n_hidden: int | None = None
    build_log: str | None = None
    wall_s: float | None = None


@dataclass
class MeasurementRecord:
    """Timing of one correct candidate; ``speedup`` is the value against the
    run's primary baseline, the one the search optimizes."""

    median_ms: float | None = None
    speedups: tuple[Speedup, ...] = ()
    speedup: float | None = None
    roofline_fraction: float | None = None
    bound: str | None = None
    findings: list[Any] = field(default_factory=list)
    raw: Any = None


@dataclass
class CandidateRecord:
    """One candidate as stored. ``seq``, ``depth``, ``status`` and ``created``
    are assigned by the store; ``evaluation``/``measurement`` are filled on read."""

    hash: str
    sources: dict[str, str]
    level: str | None
    role: str
    proposer: str
    parents: tuple[str, ...] = ()
    rationale: str = ""
    router_reason: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    backend: str = ""
    seq: int = -1
    depth: int = 0
    status: str = "pending"
    slower_at_creation: bool | None = None
    expansion_id: int | None = None
    created: float = 0.0
    evaluation: EvaluationRecord | None = None
    measurement: MeasurementRecord | None = None


@dataclass
class ExpansionRecord:
    """One proposer invocation on ``candidate`` at ``level``."""

    candidate: str
    level: str
    proposer: str
    kind: str = "policy"
    anchor: str | None = None
    policy_reason: str = ""
    router_reason: str = ""
    n_proposals: int = 0
    n_new: int = 0
    n_duplicate: int = 0
    n_malformed: int = 0
    error: str | None = None
    wall_s: float = 0.0
    id: int | None = None
    created: float = 0.0
