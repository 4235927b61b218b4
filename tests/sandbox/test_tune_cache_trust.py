"""The MetaSchedule baseline (:func:`kstrata.backends.tvm.tune.tune`, in the
judge, unsandboxed) never takes a schedule that a sandboxed expansion sent:
the built-in proposer's entries (``default_cache_dir()``) are not its own
(``own_cache_dir()``). Case ``tune_cache_poison``: a candidate's schedule
step replaced the expansion sandbox's ``tune`` and the proposer stored the
schedule it chose under the key the baseline reads, which then ran in the
judge (red-team round of 2026-12-04)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CASE = Path(__file__).resolve().parent / "cases" / "tune_cache_poison"


class Lowered(Exception):
    """tune() went on to tune instead of taking a cached entry."""


def test_the_baseline_never_reads_an_entry_the_proposer_stored(tmp_path, monkeypatch):
    pytest.importorskip("tvm")
    from kstrata.backends.registry import get_backend
    from kstrata.backends.tvm import isolated, tune
    from kstrata.backends.tvm.lower import graph_for_shape
    from kstrata.tasks.loader import resolve_task

    monkeypatch.setenv("KSTRATA_CACHE", str(tmp_path))
    task, backend = resolve_task("relu"), get_backend("tvm-llvm")
    shape = {"B": 1024, "D": 1024}
    # the graph the baseline tunes at the fitted timing shape (the shipped one, as the case's)
    sources = {**backend.initial_sources(task), "graph": graph_for_shape(task, task.full_shape(shape))}
    assert sources["graph"] == json.loads((CASE / "candidate.json").read_text())["graph"]
    # what the proposer stores after a sandboxed expansion whose tune answer the candidate chose
    key, path = isolated._tune_cache(task, sources, {"shape": shape, "trials": 16}, "tvm-llvm")
    assert key and path is not None
    evil = json.loads((CASE / "candidate.json").read_text())["schedule"]
    isolated._store_tuned(path, key, sources, {"schedule": evil, "records": []})
    assert path.is_file()

    def lower(*a, **k):
        raise Lowered

    monkeypatch.setattr(type(backend), "lower", lower)
    monkeypatch.setattr(tune, "json_serialization_works", lambda: True)
    with pytest.raises(Lowered):  # the baseline tunes for itself; it did not load the proposer's entry
        tune.tune(task, shape, "tvm-llvm", trials=16)
    assert tune.own_cache_dir() != path.parent


def test_the_proposers_tuned_entry_is_chosen_where_no_candidate_schedule_ran(tmp_path, monkeypatch):
    """The case's schedule (the shipped graph's) replaces ``tune`` in every
    process that replays it. The expansion's variants replay it; the tuning
    whose result the proposer keeps under the graph's key (every later
    candidate of the shipped graph, every run, reads it) runs in a process of
    its own given the graph alone. MetaSchedule itself is faked (a fixed
    answer for a tuning request without the schedule); the variants' process
    is real, so a tuning request that carried the schedule would get the
    case's answer."""
    pytest.importorskip("tvm")
    from collections import OrderedDict

    from kstrata.backends.tvm import isolated
    from kstrata.tasks.loader import resolve_task

    monkeypatch.setenv("KSTRATA_CACHE", str(tmp_path))
    monkeypatch.setattr(isolated, "_VARIANTS", OrderedDict())
    sources = json.loads((CASE / "candidate.json").read_text())
    honest = "# kstrata-tvm schedule: tuned\n\n\ndef schedule_relu(sch):\n    pass\n"
    real, seen = isolated._call, []

    def call(function, backend, timeout_s, **kwargs):
        seen.append(kwargs)
        if kwargs.get("tune") and "schedule" not in kwargs["sources"]:
            return {"tune": {"schedule": honest, "records": []}}
        return real(function, backend, timeout_s, **kwargs)

    monkeypatch.setattr(isolated, "_call", call)
    task = resolve_task("relu")
    _, tuned = isolated.schedule_expansion(task, sources, "tvm-llvm", tune={"shape": {"B": 8, "D": 512}, "trials": 1})
    assert tuned is not None and tuned["sources"]["schedule"] == honest, tuned
    assert [("tune" in k, k["sources"].get("schedule") is not None) for k in seen] == [(False, True), (True, False)]
    key, path = isolated._tune_cache(task, sources, {"shape": {"B": 8, "D": 512}, "trials": 1}, "tvm-llvm")
    assert json.loads(path.read_text())["sources"]["schedule"] == honest
