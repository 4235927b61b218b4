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
