"""Run store: round trips, transactions, content addressing, schema version."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass

import pytest

from kstrata.agents.base import ProposerCall
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.store import (
    CandidateRecord,
    EvaluationRecord,
    ExpansionRecord,
    MeasurementRecord,
    RunStore,
    Speedup,
    StoreError,
)
from kstrata.store.schema import SCHEMA_VERSION


@dataclass(frozen=True)
class _Task:
    name: str = "t"
    digest: str = hashlib.sha256(b"t").hexdigest()
    path: str = "t.py"


def _cand(text: str, parents=(), level="schedule") -> CandidateRecord:
    sources = normalize_sources({"schedule": text})
    return CandidateRecord(
        hash=content_hash(sources, "fake", _Task().digest), sources=sources, level=level,
        role="schedule-rules", proposer="fake", parents=tuple(parents), rationale="why",
        router_reason="because", metadata={"tiling_class": "small"}, backend="fake",
    )


@pytest.fixture
def store(tmp_path):
    s = RunStore.create(tmp_path / "run", {"budget": {"evaluations": 3}}, seed=7)
    yield s
    s.close()


def test_create_writes_config_pragmas_and_version(store, tmp_path):
    run = tmp_path / "run"
    assert json.loads((run / "config.json").read_text()) == {"budget": {"evaluations": 3}}
    assert store.config == {"budget": {"evaluations": 3}} and store.seed == 7
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store.conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    with pytest.raises(StoreError, match="already holds a run"):
        RunStore.create(run, {})
    with pytest.raises(StoreError, match="no such directory"):
        RunStore.open(tmp_path / "nowhere")


def test_newer_schema_is_refused(store, tmp_path):
    store.conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer"):
        RunStore.open(tmp_path / "run")


def test_candidate_evaluation_measurement_round_trip(store, tmp_path):
    tid = store.ensure_task(_Task())
    assert store.ensure_task(_Task()) == tid
    root, child = _cand("tile=1"), None
    assert store.add_candidate(root, tid, {"schedule": "py"})
    with store.transaction():
        exp_id = store.add_expansion(
            ExpansionRecord(candidate=root.hash, level="schedule", proposer="fake", n_new=1),
            [ProposerCall(provider="p", model="m", prompt="hi", response="yo", tokens_in=10,
                          tokens_out=5, cost_usd=0.5, latency_s=1.0)],
        )
        child = _cand("tile=2", parents=[root.hash])
        child.expansion_id = exp_id
        assert store.add_candidate(child, tid, {"schedule": "py"})
    ev = EvaluationRecord(verdict="correct", check=None, evidence={"max_err": 1e-6},
                          feedback=[{"level": "schedule", "text": "ok"}], n_public=2, n_hidden=3,
                          build_log="built\n", wall_s=0.25)
    m = MeasurementRecord(median_ms=1.5, speedups=(Speedup("eager", 2.0, 1.8, 2.2),), speedup=2.0,
                          roofline_fraction=0.4, bound="memory", findings=["f"], raw={"x": 1})
    store.record_evaluation(child.hash, ev, m, slower_at_creation=False, wall_s=0.3)
    with pytest.raises(StoreError, match="evaluated"):
        store.record_evaluation(child.hash, ev, m)

    got = {c.hash: c for c in store.candidates(with_sources=True)}
    c = got[child.hash]
    assert c.parents == (root.hash,) and c.depth == 1 and c.seq == 1 and c.status == "evaluated"
    assert c.sources == {"schedule": "tile=2\n"} and c.metadata == {"tiling_class": "small"}
    assert c.role == "schedule-rules" and c.router_reason == "because" and c.expansion_id == exp_id
    assert c.slower_at_creation is False
    assert c.evaluation.evidence == {"max_err": 1e-6} and c.evaluation.n_hidden == 3
    assert c.measurement.speedups == (Speedup("eager", 2.0, 1.8, 2.2),)
    assert c.measurement.raw == {"x": 1} and c.measurement.bound == "memory"
    assert got[root.hash].status == "pending" and got[root.hash].evaluation is None

    run = tmp_path / "run"
    assert (run / "candidates" / child.hash / "schedule.py").read_text() == "tile=2\n"
    diff = (run / "candidates" / child.hash / "diff.patch").read_text()
    assert "-tile=1" in diff and "+tile=2" in diff
    assert (run / "candidates" / child.hash / "build.log").read_text() == "built\n"
    assert store.resolve(child.hash[:10]) == child.hash
    spent = store.spent()
    assert spent["evaluations"] == 1 and spent["tokens_in"] == 10 and spent["tokens_out"] == 5
    assert spent["cost_usd"] == 0.5 and spent["proposer_calls"] == 1
    assert spent["wall_s"] == pytest.approx(0.3)
    (call,) = store.proposer_calls()
    assert call["prompt"] == "hi" and call["response"] == "yo" and call["expansion_id"] == exp_id


def test_same_source_is_one_candidate(store):
    tid = store.ensure_task(_Task())
    a = _cand("tile=1\n")
    b = _cand("tile=1   \r\n\n")  # same after normalization
    assert a.hash == b.hash
    assert store.add_candidate(a, tid) and not store.add_candidate(b, tid)
    assert len(store.candidates()) == 1
    other_task = content_hash(a.sources, "fake", "another-digest")
    other_backend = content_hash(a.sources, "other", _Task().digest)
    assert len({a.hash, other_task, other_backend}) == 3


def test_failed_transaction_leaves_no_rows_or_files(store, tmp_path):
    tid = store.ensure_task(_Task())
    root = _cand("tile=1")
    store.add_candidate(root, tid)
    kid = _cand("tile=2", parents=[root.hash])
    with pytest.raises(RuntimeError, match="boom"):
        with store.transaction():
            store.add_expansion(ExpansionRecord(candidate=root.hash, level="schedule", proposer="f"))
            store.add_candidate(kid, tid)
            assert (tmp_path / "run" / "candidates" / kid.hash / "schedule.py").exists()
            raise RuntimeError("boom")
    assert not (tmp_path / "run" / "candidates" / kid.hash).exists()
    assert [c.hash for c in store.candidates()] == [root.hash]
    assert store.expansions() == [] and "expansions" not in store.spent()
    # an integrity failure mid-write (unknown parent) also rolls back its files
    orphan = _cand("tile=4", parents=["f" * 64])
    with pytest.raises(sqlite3.IntegrityError):
        store.add_candidate(orphan, tid)
    assert not (tmp_path / "run" / "candidates" / orphan.hash).exists()
    assert len(store.candidates()) == 1
    # a failing evaluation write leaves the candidate pending and no build log
    bad = EvaluationRecord(verdict="correct", build_log="log")
    m = MeasurementRecord(speedups=(Speedup("eager", 1.0), Speedup("eager", 2.0)))
    with pytest.raises(sqlite3.IntegrityError):
        store.record_evaluation(root.hash, bad, m)
    (c,) = store.candidates()
    assert c.status == "pending" and c.evaluation is None and c.measurement is None
    assert not (tmp_path / "run" / "candidates" / root.hash / "build.log").exists()
    assert "evaluations" not in store.spent()


def test_reopen_sees_committed_state(store, tmp_path):
    tid = store.ensure_task(_Task())
    store.add_candidate(_cand("tile=1"), tid)
    store.close()
    with RunStore.open(tmp_path / "run") as again:
        assert len(again.candidates()) == 1 and again.tasks()[0]["name"] == "t"
