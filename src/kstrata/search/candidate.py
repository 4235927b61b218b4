"""Candidates: content hashing, and the adapters from what an evaluator
returns (verifier ``Evaluation``, timer ``Measurement``) to store records."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

from kstrata.store.records import EvaluationRecord, MeasurementRecord, Speedup


def normalize_source(text: str) -> str:
    """``text`` with ``\\r\\n``/``\\r`` turned into ``\\n``, trailing whitespace
    stripped from every line, leading/trailing blank lines dropped and one final
    newline. Edits that change only these give the same hash."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n") + "\n"


def normalize_sources(sources: Mapping[str, str]) -> dict[str, str]:
    """Every level of ``sources`` normalized, in sorted level order."""
    return {level: normalize_source(sources[level]) for level in sorted(sources)}


def content_hash(sources: Mapping[str, str], backend: str, task_digest: str) -> str:
    """sha256 hex over the normalized sources, the backend name and the task
    digest (sorted-key JSON, as TileLang's autotuner keys its cache), so one
    candidate is evaluated once per task and backend."""
    payload = {"backend": backend, "sources": normalize_sources(sources), "task": task_digest}
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def _get(obj: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
        if value is not None:
            return value
    return default


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def to_evaluation_record(ev: Any) -> EvaluationRecord:
    """An :class:`EvaluationRecord` from a verifier result (object or mapping).

    Reads ``verdict`` (a :class:`kstrata.verdict.Verdict` or its string),
    ``check``/``check_name``, ``evidence``, ``feedback``, ``n_public``/
    ``public_tests``, ``n_hidden``/``hidden_tests``, ``build_log``/``log``,
    ``wall_s``/``seconds``; missing fields stay empty.
    """
    verdict = _get(ev, "verdict", default="runtime_error")
    return EvaluationRecord(
        verdict=str(getattr(verdict, "value", verdict)),
        check=_get(ev, "check", "check_name"),
        evidence=_get(ev, "evidence"),
        feedback=_get(ev, "feedback"),
        n_public=_get(ev, "n_public", "public_tests"),
        n_hidden=_get(ev, "n_hidden", "hidden_tests"),
        build_log=_get(ev, "build_log", "log"),
        wall_s=_num(_get(ev, "wall_s", "seconds", "elapsed_s")),
    )


def _speedup(baseline: str, s: Any) -> Speedup | None:
    if _num(s) is not None:
        return Speedup(baseline, _num(s))
    value = _num(_get(s, "value", "point", "speedup", "median"))
    if value is None:
        return None
    lo, hi = _get(s, "ci_low", "low"), _get(s, "ci_high", "high")
    ci = _get(s, "ci")
    if lo is None and isinstance(ci, (list, tuple)) and len(ci) == 2:
        lo, hi = ci
    return Speedup(str(_get(s, "baseline", default=baseline)), value, _num(lo), _num(hi))


def to_measurement_record(m: Any, primary_baseline: str | None = None) -> MeasurementRecord:
    """A :class:`MeasurementRecord` from a timer result (object or mapping).

    Reads ``median_ms``; ``speedups`` (mapping baseline → number or object with
    ``value``/``speedup`` and ``ci_low``/``ci_high`` or ``ci``, or a list of
    such objects with ``baseline``) or a single ``speedup``; ``roofline_fraction``
    (or ``roofline`` with ``fraction`` and ``bound``); ``bound``; ``findings``.
    The primary speedup is the one against ``primary_baseline`` or, when that
    is ``None`` or absent, the first listed.
    """
    raw = _get(m, "speedups")
    if raw is None and _get(m, "speedup") is not None:
        raw = {str(_get(m, "baseline", default="baseline")): _get(m, "speedup")}
    items = raw.items() if isinstance(raw, Mapping) else ((None, s) for s in (raw or ()))
    speedups = tuple(s for b, s in ((b, _speedup(str(b), v)) for b, v in items) if s)
    by_name = {s.baseline: s.value for s in speedups}
    primary = by_name.get(primary_baseline) if primary_baseline else None
    if primary is None and speedups:
        primary = speedups[0].value
    roof = _get(m, "roofline")
    fraction = _num(_get(m, "roofline_fraction"))
    if fraction is None and roof is not None:
        fraction = _num(roof) if _num(roof) is not None else _num(_get(roof, "fraction"))
    bound = _get(m, "bound") or (None if roof is None or _num(roof) is not None else _get(roof, "bound"))
    return MeasurementRecord(
        median_ms=_num(_get(m, "median_ms")),
        speedups=speedups,
        speedup=primary,
        roofline_fraction=fraction,
        bound=None if bound is None else str(getattr(bound, "value", bound)),
        findings=list(_get(m, "findings", default=[]) or []),
        raw=m,
    )
