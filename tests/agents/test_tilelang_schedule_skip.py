"""A TileLang schedule level that nothing can change is skipped without a
model call (queue round, tilelang-c: the prompt told the schedule role to
decline when the source reads no ``SCHEDULE`` key, or only ``threads``
there, and the decline cost one call). Run with the real tilelang-c
backend object (its prompts and level notes; nothing is compiled) and
scripted model answers."""

from __future__ import annotations

import json

from agent_fakes import Log, LoggedProvider

from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.memory import MemoryStore
from kstrata.backends.registry import get_backend
from kstrata.backends.tilelang.backend import schedule_level_empty
from kstrata.search.budget import Budget
from kstrata.search.loop import SearchSettings, optimize
from kstrata.store.run_store import RunStore
from kstrata.tasks.loader import resolve_task

DECLINE = "DECLINE\nDIAGNOSIS: one pass over each row already; nothing to change at this level."


class Evaluator:
    def evaluate(self, task, backend, sources):
        return {"verdict": "correct", "feedback": []}, None


def _run(tmp_path, task_name, answers):
    backend = get_backend("tilelang-c")
    provider = LoggedProvider(list(answers))
    provider.log = Log()
    prop = HierarchicalProposer(backend, agents={lv: LevelAgent(provider, provider.log, lv)
                                                 for lv in ("schedule", "source")},
                                memory=MemoryStore(":memory:"))
    optimize(resolve_task(task_name), backend, prop, Evaluator(), policy=prop.policy("greedy"),
             budget=Budget(evaluations=2, proposer_calls=2), run_dir=tmp_path / "run", router=prop.router,
             settings=SearchSettings(level_order=("schedule", "source")))
    with RunStore.open(tmp_path / "run") as store:
        exps = store.expansions()
    roles = [p[1]["content"].split("\n", 1)[0] for p in provider.prompts]
    return exps, roles


def test_a_threads_only_schedule_on_tilelang_c_is_skipped_without_a_call(tmp_path):
    exps, roles = _run(tmp_path, "matmul_square", [DECLINE, DECLINE])  # its C form reads SCHEDULE["threads"] only
    assert roles and not any("schedule-level" in r for r in roles), roles
    skips = [json.loads(e.error.split(": ", 1)[1]) for e in exps if e.level == "schedule"]
    assert skips and all(s["skipped"] and "only `SCHEDULE['threads']`" in s["diagnosis"] for s in skips), skips


def test_a_schedule_the_source_reads_is_still_asked(tmp_path):
    _, roles = _run(tmp_path, "gelu", [DECLINE, DECLINE])  # gelu's kernel reads SCHEDULE["block"]
    assert roles and "schedule-level" in roles[0], roles


def test_what_the_schedule_level_can_change_is_read_from_the_source():
    reads_block = 'SCHEDULE = {"block": 256}\nk = kern(n, SCHEDULE["block"], SCHEDULE.get("threads", 1))\n'
    threads_only = 'SCHEDULE = {"threads": 128}\nk = kern(n, SCHEDULE["threads"])\n'
    assert schedule_level_empty("tilelang-c", {"source": reads_block}) is None
    assert "only `SCHEDULE['threads']`" in schedule_level_empty("tilelang-c", {"source": threads_only})
    assert schedule_level_empty("tilelang-cuda", {"source": threads_only}) is None  # threads count on a GPU
    assert "reads no `SCHEDULE` key" in schedule_level_empty("tilelang-cuda", {"source": "k = kern(n, 128)\n"})
