"""A second run on a task is told what failed in the first (queue round
rt58, a second hierarchical log_softmax run on tvm-llvm with the first run's
memory): only skills with trusted speedups crossed runs, and the contended
machine stored none, so the new run's graph prompt said nothing of the first
run's failed graph changes (a tail left out of a max; a reassociated
log-sum-exp wrong on the 'far' draw), each located there."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.memory import MemoryStore
from kstrata.agents.router import Declined
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.search.tree import CandidateTree
from kstrata.store.records import EvaluationRecord
from kstrata.tasks.loader import resolve_task

ROOT = {"graph": "# kstrata-tvm graph\n# build: symbolic\nlv = R.nn.log_softmax(x)\n",
        "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"}
ANSWER = ("The max pass skips the tail: one PrimFunc per row.\n\n```python\n# kstrata-tvm graph\n"
          "# build: symbolic\nlv = R.call_tir(cls.rows, (x,))\n```\n")
MESSAGE = "8 of 8 elements outside tolerance (max error inf)"
VALUES = "first wrong elements (index: expected -> got): [0, 0]: 0 -> -inf; [1, 0]: 0 -> -inf"


def _ctx(tree):
    return ProposeContext(backend="tvm-llvm", levels=("graph", "schedule", "source"), tree=tree,
                          budget_left={"proposer_calls": None})


def _proposer(memory, answers):
    provider = ScriptedProvider(answers)
    prop = HierarchicalProposer(StubBackend(), agents={"graph": LevelAgent(provider, NoLog(), "graph")},
                                memory=memory)
    return prop, provider


def _first_run(memory, task, created):
    root = rec("a", sources=ROOT, created=created)
    prop, _ = _proposer(memory, [ANSWER])
    tree = CandidateTree([root])
    (p,) = prop.propose(task, tree["a" * 8], {}, "graph", context=_ctx(tree)).proposals
    failed = rec("x", "graph", ("a",), verdict="incorrect", expansion_id=1,
                 rationale="The max pass skips the tail: one PrimFunc per row.", created=created + 1)
    failed.hash = content_hash(normalize_sources(p.sources), "tvm-llvm", task.digest)
    failed.evaluation = EvaluationRecord(verdict="incorrect", check="tolerance", evidence={
        "message": MESSAGE, "stage": "public", "test": {"shape": {"B": 8, "D": 1}, "seed": 0,
                                                        "distribution": "normal"}},
        feedback=[{"kind": "wrong_share", "level": "source", "text": "8 of 8 elements wrong (100.00%)"},
                  {"kind": "values", "level": "source", "text": VALUES}])
    prop.learn(CandidateTree([root, failed]), task)


def _second_run_prompt(memory, task, created):
    prop, provider = _proposer(memory, ["DECLINE\nDIAGNOSIS: looking"])
    tree = CandidateTree([rec("a", sources=ROOT, created=created)])
    with pytest.raises(Declined):
        prop.propose(task, tree["a" * 8], {}, "graph", context=_ctx(tree))
    return provider.prompts[0][1]["content"]


def test_a_second_run_is_told_what_failed_in_the_first():
    task, memory = resolve_task("log_softmax"), MemoryStore(":memory:")
    _first_run(memory, task, created=1.0)
    user = _second_run_prompt(memory, task, created=2.0)
    head = "# What failed in earlier runs of this task (graph level on tvm-llvm, latest first)"
    assert head in user, user
    section = user.split(head, 1)[1].split("\n# ", 1)[0]
    assert "The max pass skips the tail" in section
    assert "incorrect (tolerance) at the public test at B=8, D=1 (input draw `normal`, seed 0)" in section
    assert MESSAGE in section, section
    assert f"; where: {VALUES}" in section, section  # the located item, not the verdict's first line alone


def test_a_run_is_not_shown_its_own_failures_as_an_earlier_runs():
    task, memory = resolve_task("log_softmax"), MemoryStore(":memory:")
    _first_run(memory, task, created=1.0)
    user = _second_run_prompt(memory, task, created=1.0)  # the same root and time: the same run resumed
    assert "What failed in earlier runs" not in user
    assert "What failed in earlier runs" not in _second_run_prompt(memory, resolve_task("softmax"), created=3.0)
