"""Checks that the rows read back from run.db are what kstrata wrote: each
field of the right kind, and a lineage that runs from each candidate to
earlier ones only.

run.db is a file anyone can edit (a copied run, a hand-fixed one). SQLite
keeps whatever is written to a column, whatever its declared type, so a
``seq`` of ``'abc'``, a speedup of ``'abc'``, a parent hash that names no
candidate or a parent loop read back as-is: ``kstrata show`` and ``tree``
then ended in a ``TypeError``/``ValueError``/``KeyError`` traceback, and a
candidate made its own ancestor kept them in an endless loop (red team rt62).
:func:`check_candidates` and :func:`check_expansions` turn each into one
``run.db is damaged`` error instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from kstrata.store.records import CandidateRecord, ExpansionRecord

_NUMBER = (int, float)
#: what a field's annotation (as written in :mod:`kstrata.store.records`) allows
_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "str": ((str,), "text"),
    "str | None": ((str, type(None)), "text"),
    "int": ((int,), "an integer"),
    "int | None": ((int, type(None)), "an integer"),
    "float": (_NUMBER, "a number"),
    "float | None": (_NUMBER + (type(None),), "a number"),
    "bool | None": ((int, type(None)), "a flag"),
    "dict[str, Any]": ((dict,), "a JSON object"),
    "dict[str, str]": ((dict,), "a JSON object"),
    "list[Any]": ((list,), "a JSON list"),
}
#: JSON columns annotated ``Any`` and what kstrata writes there
_JSON = {"evidence": ((dict, type(None)), "a JSON object"), "feedback": ((list, type(None)), "a JSON list"),
         "raw": ((dict, type(None)), "a JSON object")}


def check_fields(record: Any, what: str, damaged: Callable[[str], Exception]) -> None:
    """Raise ``damaged(reason)`` unless each field of the dataclass ``record`` whose annotation
    is a plain kind (text, integer, number, flag, JSON object or list) holds a value of that kind."""
    for f in dataclasses.fields(record):
        kinds = _JSON.get(f.name) if f.type == "Any" else _KINDS.get(str(f.type))
        if kinds is None:
            continue
        value = getattr(record, f.name)
        if not isinstance(value, kinds[0]):
            raise damaged(f"{what}'s {f.name} is {str(value)[:40]!r}, not {kinds[1]}")


def check_candidates(records: Iterable[CandidateRecord], damaged: Callable[[str], Exception]) -> None:
    """Raise ``damaged(reason)`` unless every record's fields have the kinds
    :class:`CandidateRecord` declares (its evaluation's, measurement's and
    speedups' too) and every parent is a candidate created before its child
    (lower ``seq``), which also rules out loops.

    ``damaged`` builds the exception (a :class:`kstrata.store.run_store.StoreError`)."""
    seqs: dict[str, int] = {}
    records = list(records)
    for r in records:
        what = f"candidate {str(r.hash)[:12]}"
        check_fields(r, what, damaged)
        for part in (r.evaluation, r.measurement):
            if part is not None:
                check_fields(part, what, damaged)
        for s in r.measurement.speedups if r.measurement is not None else ():
            check_fields(s, f"{what}'s speedup against {str(s.baseline)[:20]!r}", damaged)
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in r.sources.items()):
            raise damaged(f"{what} has a source that is not text")
        seqs[r.hash] = r.seq
    for r in records:
        for p in r.parents:
            if p not in seqs:
                raise damaged(f"candidate {r.hash[:12]} names a parent {str(p)[:12]!r} that is no candidate of the run")
            if seqs[p] >= r.seq:
                raise damaged(f"candidate {r.hash[:12]} names {p[:12]} as its parent, which was not made before it "
                              "(a lineage that loops)")


def check_expansions(records: Iterable[ExpansionRecord], hashes: set[str],
                     damaged: Callable[[str], Exception]) -> None:
    """Raise ``damaged(reason)`` unless every expansion's fields have the kinds
    :class:`ExpansionRecord` declares and its candidate (and anchor, if any) is
    one of ``hashes``."""
    for e in records:
        what = f"expansion {e.id}"
        check_fields(e, what, damaged)
        for name in ("candidate", "anchor"):
            h = getattr(e, name)
            if h is not None and h not in hashes:
                raise damaged(f"{what} names a {name} {str(h)[:12]!r} that is no candidate of the run")


def _kind(value: Any) -> str:
    """The JSON kind of ``value`` in words, for a damaged-run message."""
    return {bool: "true/false", int: "a number", float: "a number", str: "text", list: "a JSON list",
            dict: "a JSON object", type(None): "null"}.get(type(value), type(value).__name__)


def _shape(value: Any) -> str | None:
    """Why ``value`` is no stored timing shape (a JSON object, or its text, of
    names to whole sizes of at least 1): its kind, or ``.NAME VALUE (rule)``;
    ``None`` when it is one."""
    import json

    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return "text that is not JSON"
    if not isinstance(value, dict):
        return _kind(value)
    bad = [f"{k} {str(v)[:40]!r}" for k, v in value.items() if type(v) is not int or v < 1]
    return f".{bad[0]} (a size is a whole number of at least 1)" if bad else None


def _budget(value: Any) -> str | None:
    """Why ``value`` is no stored budget (:class:`kstrata.search.budget.Budget`
    as a JSON object: known limits only, each null or a finite non-negative
    number, whole for counts): its kind, or ``.KEY VALUE (rule)``; ``None``
    when it is one."""
    import math

    from kstrata.search.budget import REAL_FIELDS, Budget

    if not isinstance(value, dict):
        return _kind(value)
    known = {f.name for f in dataclasses.fields(Budget)}
    for k, v in value.items():
        if k not in known:
            return f".{str(k)[:40]} (no such limit; known: {', '.join(sorted(known))})"
        if v is None:
            continue
        number = type(v) in (int, float) and math.isfinite(v) and v >= 0
        if not number or (k not in REAL_FIELDS and type(v) is not int):
            return f".{k} {str(v)[:40]!r} (a limit is null or a {'' if k in REAL_FIELDS else 'whole '}number of at least 0)"
    return None


#: The run config's entries kstrata reads back (``--resume``, show, tree,
#: retime, report, mcp) -> why a value is not what kstrata writes (None: it is)
_CONFIG: dict[tuple[str, ...], Callable[[Any], str | None]] = {
    ("task",): lambda v: None if isinstance(v, dict) else _kind(v),
    ("task", "name"): lambda v: None if isinstance(v, str) else _kind(v),
    ("task", "digest"): lambda v: None if isinstance(v, str) else _kind(v),
    ("task", "path"): lambda v: None if isinstance(v, str) else _kind(v),
    ("backend",): lambda v: None if isinstance(v, str) else _kind(v),
    ("proposer",): lambda v: None if isinstance(v, str) else _kind(v),
    ("policy",): lambda v: None if isinstance(v, dict) else _kind(v),
    ("settings",): lambda v: None if isinstance(v, dict) else _kind(v),
    ("serve",): lambda v: None if isinstance(v, dict) else _kind(v),
    ("budget",): _budget,
    ("cli",): lambda v: None if isinstance(v, dict) else _kind(v),
    ("cli", "proposer"): lambda v: None if isinstance(v, (str, type(None))) else _kind(v),
    ("cli", "llm"): lambda v: None if isinstance(v, (str, type(None))) else _kind(v),
    ("cli", "executor"): lambda v: None if isinstance(v, (str, type(None))) else _kind(v),
    ("cli", "ablate"): lambda v: None if isinstance(v, (str, type(None))) else _kind(v),
    ("cli", "baselines"): lambda v: None if v is None or (isinstance(v, list) and v and all(
        isinstance(b, str) for b in v)) else f"{_kind(v)} (not a list of baseline names)",
    ("cli", "timing_shape"): lambda v: None if v is None else _shape(v),
}


def check_config(config: Any, damaged: Callable[[str], Exception]) -> dict[str, Any]:
    """``config`` (a run's, as read from run.db) when each entry kstrata reads
    back has the kind kstrata writes (:data:`_CONFIG`); else raise
    ``damaged(reason)`` naming the entry and what it holds.

    A hand-edited config (``"budget": "abc"``, ``"cli": {"timing_shape":
    [1, 2]}``, a JSON list for the whole config) ended ``kstrata optimize
    --resume`` and ``kstrata tree`` in an ``AttributeError``, ``ValueError``,
    ``TypeError`` or ``JSONDecodeError`` traceback (red team rt62, left open;
    rt65). Entries that are absent are not required (older runs, MCP runs)."""
    if not isinstance(config, dict):
        raise damaged(f"the run's config is {_kind(config)}, not a JSON object")
    for path, why_not in _CONFIG.items():
        parent: Any = config
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if not isinstance(parent, dict) or path[-1] not in parent:
            continue
        why = why_not(parent[path[-1]])
        if why is not None:
            raise damaged(f"the run's config has {'.'.join(path)}{why}" if why.startswith(".") else
                          f"the run's config has {'.'.join(path)} as {why}, not what kstrata writes there")
    return config
