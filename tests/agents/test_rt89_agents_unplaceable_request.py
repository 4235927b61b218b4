"""A cross-level request to a level the prompt did not offer is dropped, and the decline says so (queue round
rt89: a tvm-llvm graph agent, offered only ``schedule`` -- no source level in that run -- declined with
"CROSS-LEVEL REQUEST: source: ...", and the next prompts read "(asked source: ...)" though no agent would act)."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.parse import placeable_requests
from kstrata.agents.router import Declined
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

LEVELS = ("graph", "schedule", "source")
ROOT = {"graph": "# kstrata-tvm graph\n# build: symbolic\nlv = R.power(x, 2)\n",
        "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"}
DECLINE = ("DECLINE\nDIAGNOSIS: the graph is already one PrimFunc; the rest is in the generated code.\n"
           "CROSS-LEVEL REQUEST: source: hoist the row's rstd out of the y loop\n")


def test_a_decline_asking_a_level_not_offered_keeps_the_diagnosis_and_drops_the_request():
    task = resolve_task("rmsnorm")
    prop = LLMProposer(ScriptedProvider([DECLINE]), NoLog(), backend=StubBackend())
    tree = CandidateTree([rec("a", sources=ROOT)])
    ctx = ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree, budget_left={"proposer_calls": None})
    with pytest.raises(Declined) as e:
        prop.propose(task, tree["a" * 8], {}, "graph", context=ctx)
    record = e.value.record
    assert record["requests"] == [], record
    assert "already one PrimFunc" in record["diagnosis"], record
    assert "request to source was dropped" in record["diagnosis"] and "can go to schedule" in record["diagnosis"]


def test_requests_to_offered_levels_stay():
    reqs = [{"level": "schedule", "text": "a"}, {"level": "source", "text": "b"}]
    kept, note = placeable_requests(reqs, ("schedule",))
    assert kept == [{"level": "schedule", "text": "a"}] and "source" in note
    assert placeable_requests(reqs, ()) == (reqs, "")  # nothing offered known: all kept
