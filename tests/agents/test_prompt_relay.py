"""What a prompt relays of the model's earlier answers along the path to its
candidate (queue round 5, an engineer as the model): a failed graph answer made
on the parent reached the graph prompt of the parent's schedule child as one
history line, without its location or diff, though the same graph text was to
be edited again; and its located items were tagged with other levels than
the one changed."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.memory import MemoryStore
from kstrata.agents.router import Declined
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.search.tree import CandidateTree
from kstrata.store.records import EvaluationRecord, ExpansionRecord
from kstrata.tasks.loader import resolve_task

LEVELS = ("graph", "schedule", "source")
GRAPH = "# kstrata-tvm graph\n# build: symbolic\nlv = R.power(x, 2)\n"
ROOT = {"graph": GRAPH, "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"}
BAD = ("One PrimFunc for every pass.\n\n```python\n# kstrata-tvm graph\n# build: symbolic\n"
       "ss = T.if_then_else(vc * 16 + vl <= d, x[vi, vc * 16 + vl], 0.0)\n```\n")
MESSAGE = "382 of 385 elements outside tolerance (max error 2.62)"
WRONG = "382 of 385 elements wrong (99.22%), max error 2.62"
LOCATED = "passes at [{'B': 8, 'D': 512}] but fails at [{'B': 5, 'D': 77}]: a boundary / shape-specific bug"


def _ctx(tree):
    return ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree, budget_left={"proposer_calls": None})


def _proposer(kind, provider):
    if kind == "llm":
        return LLMProposer(provider, NoLog(), backend=StubBackend())
    return HierarchicalProposer(StubBackend(), agents={"graph": LevelAgent(provider, NoLog(), "graph")},
                                memory=MemoryStore(":memory:"))


def _tree_after_failed_graph(kind, between="schedule"):
    """Root ``a``; the model's graph answer on it failed (child F); a correct
    child ``s`` of ``a`` made at ``between``. Returns the proposer (it knows
    F's text), the provider and the tree."""
    task = resolve_task("rmsnorm")
    root = rec("a", sources=ROOT)
    provider = ScriptedProvider([BAD, "DECLINE\nDIAGNOSIS: looking"])
    prop = _proposer(kind, provider)
    tree = CandidateTree([root])
    (p,) = prop.propose(task, tree["a" * 8], {}, "graph", context=_ctx(tree)).proposals
    failed = rec("x", "graph", ("a",), verdict="incorrect", expansion_id=1, rationale="One PrimFunc for every pass.")
    failed.hash, failed.seq = content_hash(normalize_sources(p.sources), "tvm-llvm", task.digest), 1
    failed.evaluation = EvaluationRecord(verdict="incorrect", check="tolerance", evidence={"message": MESSAGE, "stage": "public",
                                                                   "test": {"shape": {"B": 5, "D": 77}, "seed": 0,
                                                                            "distribution": "offset"}},
                                         feedback=[{"kind": "wrong_share", "level": "source", "text": WRONG},
                                                   {"kind": "shapes", "level": "schedule", "text": LOCATED}])
    sources = dict(ROOT) if between != "graph" else {**ROOT, "graph": GRAPH + "# fused\n"}
    child = rec("s", between, ("a",), sources={**sources, between: sources[between] + "# edited\n"}
                if between != "graph" else sources, expansion_id=2, rationale="parallelize rows")
    child.seq = 2
    tree = CandidateTree([root, failed, child],
                         [ExpansionRecord(candidate="a" * 8, level="graph", proposer=kind, id=1),
                          ExpansionRecord(candidate="a" * 8, level=between, proposer=kind, id=2)])
    return task, prop, provider, tree


@pytest.mark.parametrize("kind", ["llm", "hierarchical"])
def test_a_failed_answer_on_the_parent_reaches_the_childs_prompt_at_the_same_text(kind):
    task, prop, provider, tree = _tree_after_failed_graph(kind)
    with pytest.raises(Declined):
        prop.propose(task, tree["s" * 8], {}, "graph", context=_ctx(tree))
    user = provider.prompts[1][1]["content"]
    assert "# Your last answer at this level failed (made on an ancestor with this `graph` text)" in user
    assert "made on aaaaaaaa (an ancestor of this candidate" in user
    assert "verdict `incorrect`, decided by the `tolerance` check" in user and MESSAGE in user
    # the test it failed at, as the judge recorded it (queue round 5: not shown before)
    assert "It failed at the public test at B=5, D=77 (input draw `offset`, seed 0)." in user
    # the verifier's generic tags (shapes: schedule, wrong_share: source) name the level of the
    # change instead: it was made from a candidate that passed, so the fault is the change's
    assert f"[shapes, likely at level graph] {LOCATED}" in user
    assert f"[wrong_share, likely at level graph] {WRONG}" in user
    assert "likely at level schedule" not in user and "likely at level source" not in user
    diff = user.split("The change that failed (a diff from the current text above):\n```diff\n", 1)[1]
    assert "+ss = T.if_then_else(vc * 16 + vl <= d" in diff.split("```", 1)[0]
    assert "-lv = R.power(x, 2)" in diff.split("```", 1)[0]
    # said once: not again as an 'elsewhere in this run' history line
    assert "elsewhere in this run: [graph" not in user
    # no later graph answer in the run: nothing said of one (test_prompt_later_fix.py)
    assert "Since then, this agent answered" not in user and "unless a later answer" not in user


@pytest.mark.parametrize("kind", ["llm", "hierarchical"])
def test_a_failed_answer_on_the_parent_is_not_relayed_once_the_text_changed(kind):
    """A graph child of the parent has another graph text: the parent's failed
    graph change is no diff of it, so it stays a history line."""
    task, prop, provider, tree = _tree_after_failed_graph(kind, between="graph")
    with pytest.raises(Declined):
        prop.propose(task, tree["s" * 8], {}, "graph", context=_ctx(tree))
    user = provider.prompts[1][1]["content"]
    assert "# Your last answer at this level failed" not in user
    assert "elsewhere in this run: [graph, graph-agent] One PrimFunc for every pass." in user


def test_a_childs_request_is_shown_as_that_childs_not_this_candidates():
    """Queue round 5 (rmsnorm, hierarchical): the graph child's rationale ended
    "CROSS-LEVEL REQUEST: schedule: in rms_norm_rows parallelize ...", and
    the schedule prompt of its parent (which has no rms_norm_rows) showed that
    line verbatim, as if it were asked of the parent's schedule."""
    task = resolve_task("rmsnorm")
    root = rec("a", sources=ROOT)
    why = "One PrimFunc for every pass.\nCROSS-LEVEL REQUEST: schedule: in rms_norm_rows parallelize the row loop"
    child = rec("g", "graph", ("a",), verdict="incorrect", expansion_id=1, rationale=why)
    child.seq = 1
    tree = CandidateTree([root, child], [ExpansionRecord(candidate="a" * 8, level="graph", proposer="llm", id=1)])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog(), backend=StubBackend()).propose(task, tree["a" * 8], {}, "schedule",
                                                                      context=_ctx(tree))
    user = provider.prompts[0][1]["content"]
    assert ("CROSS-LEVEL REQUEST (made for child gggggggg, not for this candidate): schedule: in rms_norm_rows "
            "parallelize the row loop") in user
    assert "CROSS-LEVEL REQUEST: schedule: in rms_norm_rows" not in user


def test_a_hidden_failure_says_it_was_hidden_and_names_nothing_of_it():
    from kstrata.agents.run_history import failing_test

    assert failing_test({"stage": "hidden", "message": "a hidden test fails"}) == \
        "a hidden test (its shape, seed and draw are not shown)"
    assert failing_test({"message": "compile error"}) == ""


def test_a_failed_child_at_another_level_says_where_it_failed():
    """Queue round rt56: the parent's schedule prompt listed the failed graph
    child as "incorrect (tolerance): 384 of 385 elements outside tolerance",
    without the test it failed at (B=5, D=77: a tail bug), which the judge had
    recorded."""
    task, prop, provider, tree = _tree_after_failed_graph("llm")
    with pytest.raises(Declined):
        prop.propose(task, tree["a" * 8], {}, "schedule", context=_ctx(tree))
    user = provider.prompts[1][1]["content"]
    section = user.split("# What the other levels' roles did with this candidate", 1)[1]
    assert ("-> incorrect (tolerance) at the public test at B=5, D=77 (input draw `offset`, seed 0): "
            + MESSAGE) in section
