"""The TileLang parameter layer (``kstrata.backends.tilelang.tune_rules``):
schedule-level moves read from the ``# kstrata-tune:`` line by regular
expressions, for the targets they apply to (no TileLang environment needed)."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

from kstrata.agents.base import ProposeContext
from kstrata.agents.builtin import TileLangTuneProposer, for_backend
from kstrata.backends.registry import get_backend
from kstrata.backends.tilelang.tune_rules import declared, schedule_variants
from kstrata.tasks.loader import resolve_task

SOURCE = ('SCHEDULE = {"block": 256, "threads": 1}  # kstrata-tune: block in {64, 128, 256, 512}; '
          'threads in {128, 256} on cuda\n')


def test_declared_by_target():
    assert declared(SOURCE, "c") == {"block": ((64, 128, 256, 512), 256)}
    assert declared(SOURCE, "cuda")["threads"] == ((128, 256), 1)
    assert declared("SCHEDULE = {'block': 4}\n", "c") == {}


def test_moves_nearest_first_and_from_the_schedule_level():
    moves = schedule_variants(SOURCE, "", "c", random.Random(0))
    assert [m[2] for m in moves] == [{"block": 128}, {"block": 512}, {"block": 64}]
    assert json.loads(moves[0][0]) == {"block": 128}
    # the schedule level's value wins over the literal
    moves = schedule_variants(SOURCE, json.dumps({"block": 64, "threads": 1}), "c")
    assert {m[2]["block"] for m in moves} == {128, 256}
    assert all(json.loads(m[0])["threads"] == 1 for m in moves)
    assert schedule_variants(SOURCE, "not json", "c") == []


def test_builtin_proposer_edits_the_schedule_of_a_shipped_kernel():
    backend = get_backend("tilelang-c")
    proposer = for_backend(backend)
    assert isinstance(proposer, TileLangTuneProposer)
    sources = backend.initial_sources(resolve_task("relu"))
    node = SimpleNamespace(sources=sources, hash="h0")
    ctx = ProposeContext(backend="tilelang-c", levels=backend.levels)
    batch = proposer.propose(None, node, {}, "schedule", context=ctx)
    assert len(batch.proposals) == 4
    for p in batch.proposals:
        assert p.level == "schedule" and p.sources["source"] == sources["source"]
        assert json.loads(p.sources["schedule"])["threads"] == 1  # C target: one thread
    assert proposer.propose(None, node, {}, "source", context=ctx).proposals == []


def test_a_kernel_with_nothing_to_tune_says_so():
    """matmul_square's CPU form declares no choices for the C target (rmsnorm's did
    before it had rows per program, newcomer nc20): the expansion is a
    decline that names why (newcomer nc10: a 2-evaluation tilelang-c run evaluated 1
    and stopped with "policy exhausted", three silent empty expansions)."""
    backend = get_backend("tilelang-c")
    proposer = for_backend(backend)
    sources = backend.initial_sources(resolve_task("matmul_square"))
    node = SimpleNamespace(sources=sources, hash="h0")
    ctx = ProposeContext(backend="tilelang-c", levels=backend.levels)
    batch = proposer.propose(None, node, {}, "schedule", context=ctx)
    assert batch.proposals == [] and batch.skipped is not None
    assert batch.skipped["level"] == "schedule" and "kstrata-tune" in batch.skipped["diagnosis"]
    assert "'c'" in batch.skipped["diagnosis"]
