"""Routing by what can fix the fault, and declines: parsed, stored on the tree,
routed, shown until served (issue 19)."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, declined_expansion, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.memory import MemoryStore
from kstrata.agents.parse import parse_cross_level_requests, parse_decline
from kstrata.agents.router import (
    Declined,
    FeedbackRouter,
    declines,
    editable_levels,
    pending_requests,
)
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

LEVELS = ["graph", "schedule", "source"]
PREF = ("source", "schedule", "graph")
HIDDEN = {"kind": "hidden_failure", "level": "schedule",  # runner.failing_level: the placeholder schedule
          "text": "all public tests pass but a hidden test fails"}
DECLINE = """x is read three times by the graph's layer_norm; no schedule can fix that.

DECLINE
DIAGNOSIS: R.nn.layer_norm legalizes to three passes over x (mean, squared deviations, normalize), one nest each;
the schedule only reorders those loops.
CROSS-LEVEL REQUEST: graph: one row-loop PrimFunc that reads x once per pass over a row in cache
CROSS-LEVEL REQUEST: schedule: ignored, that is my own level
"""


def test_decline_is_parsed_without_code_and_only_then():
    d = parse_decline(DECLINE, "schedule")
    assert d is not None and d.diagnosis.startswith("R.nn.layer_norm legalizes") and "reorders" in d.diagnosis
    assert d.requests == ({"level": "graph", "text": "one row-loop PrimFunc that reads x once per pass over a "
                                                     "row in cache"},)
    assert parse_decline("DECLINE\nthe graph is at fault", "schedule").diagnosis == "the graph is at fault"
    assert parse_decline(DECLINE + "```python\ndef schedule(sch):\n    pass\n```\n") is None  # code: a change
    assert parse_decline("Parallelize.\n```python\nx = 1\n```\n") is None


def test_numerical_failure_of_a_graph_only_candidate_goes_to_graph_never_to_source():
    # the root (graph + default schedule) and a graph edit: neither has source text, the schedule is untouched
    tree = CandidateTree([rec("a"), rec("b", "graph", ("a",), verdict="incorrect", feedback=[HIDDEN])])
    level, reason = FeedbackRouter(backend="tvm-llvm")(tree, tree["b" * 8], LEVELS, PREF)
    assert level == "graph", reason
    assert "tagged schedule" in reason and "not source: nothing to edit there" in reason
    # a tag at source (the old runner's) on a candidate without source text is moved the same way
    src = {**HIDDEN, "level": "source"}
    tree = CandidateTree([rec("a"), rec("b", "graph", ("a",), verdict="incorrect", feedback=[src])])
    assert FeedbackRouter(backend="tvm-llvm")(tree, tree["b" * 8], LEVELS, PREF)[0] == "graph"
    # once the schedule was edited on the lineage, a numerical failure may be the schedule's
    tree = CandidateTree([rec("a"), rec("b", "graph", ("a",)),
                          rec("c", "schedule", ("b",), verdict="incorrect", feedback=[HIDDEN])])
    assert FeedbackRouter(backend="tvm-llvm")(tree, tree["c" * 8], LEVELS, PREF)[0] == "schedule"


def test_no_role_for_a_level_that_cannot_be_edited():
    assert editable_levels("tvm-llvm", LEVELS, frozenset({"graph", "schedule"})) == ["graph", "schedule"]
    assert editable_levels("tvm-llvm", LEVELS, frozenset(LEVELS)) == LEVELS
    assert editable_levels("tilelang-c", LEVELS, frozenset(LEVELS)) == ["schedule", "source"]
    assert editable_levels("triton-interp", ["source"], frozenset({"source"})) == ["source"]
    # a source edit gives the candidate source text: then source is routable (a compile error stays there)
    tree = CandidateTree([rec("a"), rec("b", "source", ("a",), verdict="compile_error",
                                        feedback=[{"kind": "build_error", "level": "source", "text": "bad IR"}])])
    assert FeedbackRouter(backend="tvm-llvm")(tree, tree["b" * 8], LEVELS, PREF)[0] == "source"
    # a request for source on a candidate without it is not acted on
    tree = CandidateTree([rec("a", metadata={}), rec("b", "schedule", ("a",), metadata={
        "cross_level_request": [{"level": "source", "text": "use FMA"}]})])
    level, reason = FeedbackRouter(backend="tvm-llvm")(tree, tree["b" * 8], LEVELS, PREF)
    assert level != "source" and not reason.startswith("cross-level request")


def _agent_run(answers):
    provider = ScriptedProvider(list(answers))
    agent = LevelAgent(provider, NoLog(), "schedule")
    return provider, agent


def test_a_decline_is_stored_routed_and_shown_until_served(tmp_path):
    task = resolve_task("layernorm")

    memory = MemoryStore(tmp_path / "m.db")
    provider, agent = _agent_run([DECLINE])
    prop = HierarchicalProposer(StubBackend(), agents={"schedule": agent}, memory=memory)
    root = rec("a", sources={"graph": "# kstrata-tvm graph\n", "schedule": "def schedule(sch):\n    pass\n"})
    tree = CandidateTree([root])
    ctx = ProposeContext(backend="tvm-llvm", levels=StubBackend.levels, tree=tree)
    with pytest.raises(Declined) as e:
        prop.propose(task, tree["a" * 8], tree["a" * 8].feedback(), "schedule", context=ctx)
    assert len(provider.prompts) == 1  # no retry asking for code again
    system = provider.prompts[0][0]["content"]
    assert "DECLINE\nDIAGNOSIS:" in system and "CROSS-LEVEL REQUEST: <graph>:" in system
    assert e.value.record["requests"] == [{"level": "graph", "text": "one row-loop PrimFunc that reads x once "
                                                                     "per pass over a row in cache"}]
    key = prop.run_key(task, ctx)
    (a,) = memory.attempts(key)
    assert a.outcome == "declined" and a.summary.startswith("R.nn.layer_norm") and "asks graph" in a.reason

    # the loop stores the decline with the expansion: now it is on the tree, routed and shown
    exp = declined_expansion("a", "schedule", "schedule", e.value.record["diagnosis"],
                             e.value.record["requests"], exp_id=1)
    tree = CandidateTree([root], [exp])
    assert declines(tree)[0]["candidate"] == "a" * 8
    level, reason = prop.router(tree, tree["a" * 8], LEVELS, PREF)
    assert level == "graph" and reason.startswith("decline and request from schedule-agent")
    graph_agent_provider = ScriptedProvider(["Two passes.\n```python\n# kstrata-tvm graph\n# two-pass\n```\n"])
    prop.agents["graph"] = LevelAgent(graph_agent_provider, NoLog(), "graph")
    ctx = ProposeContext(backend="tvm-llvm", levels=StubBackend.levels, tree=tree)
    prop._replay = lambda task, parent, sources: (sources, {"applied": 0, "funcs": [], "failed": []})
    batch = prop.propose(task, tree["a" * 8], {}, "graph", context=ctx)
    shown = graph_agent_provider.prompts[0][1]["content"]
    assert "# Requests from other agents for this level" in shown
    assert "declined its level (R.nn.layer_norm legalizes" in shown and "one row-loop PrimFunc" in shown
    assert batch.proposals and batch.proposals[0].metadata["text_levels"] == ["graph", "schedule"]

    # served: a graph candidate made from the root after the decline; its sibling no longer sees it
    served = CandidateTree([root, rec("b", "schedule", ("a",), expansion_id=0),
                            rec("c", "graph", ("a",), expansion_id=2)], [exp])
    assert pending_requests(served, served["b" * 8]) == [] and pending_requests(served, served["a" * 8]) == []


def test_a_request_made_on_a_child_waits_for_the_child_not_its_parent():
    req = {"cross_level_request": [{"level": "graph", "text": "fuse the epilogue"}]}
    tree = CandidateTree([rec("a"), rec("b", "schedule", ("a",), metadata=req, expansion_id=1)])
    assert pending_requests(tree, tree["a" * 8]) == []  # the parent lacks the child's schedule
    (r,) = pending_requests(tree, tree["b" * 8])
    assert r["text"] == "fuse the epilogue" and r["by"] == "b" * 8
    level, reason = FeedbackRouter(backend="tvm-llvm")(tree, tree["b" * 8], LEVELS, PREF)
    assert level == "graph" and "fuse the epilogue" in reason
    # a decline on the child counts the same way, for the child
    tree = CandidateTree([rec("a"), rec("b", "schedule", ("a",), expansion_id=1)],
                         [declined_expansion("b", "schedule", "schedule", "needs fusion",
                                             [{"level": "graph", "text": "fuse"}], exp_id=2)])
    assert [r["kind"] for r in pending_requests(tree, tree["b" * 8])] == ["decline"]
    assert pending_requests(tree, tree["a" * 8]) == []
    # a graph change made from the parent (a sibling of the requester) does not serve it
    tree = CandidateTree([rec("a"), rec("b", "schedule", ("a",), metadata=req, expansion_id=1),
                          rec("c", "graph", ("a",), expansion_id=2)])
    assert len(pending_requests(tree, tree["b" * 8])) == 1
    # one made from the requester, after the request, does
    tree = CandidateTree([rec("a"), rec("b", "schedule", ("a",), metadata=req, expansion_id=1),
                          rec("c", "graph", ("b",), expansion_id=2)])
    assert pending_requests(tree, tree["b" * 8]) == [] and pending_requests(tree, tree["c" * 8]) == []


def test_a_request_with_the_level_in_angle_brackets_is_read_as_the_model_meant():
    """The answer format shows ``CROSS-LEVEL REQUEST: <schedule>: ...``; a model that
    copies the brackets still makes a request (it was stored as none, and its text
    folded into the diagnosis)."""
    answer = ("DECLINE\nDIAGNOSIS: the graph is one fused softmax already.\n"
              "CROSS-LEVEL REQUEST: <schedule>: rfactor the row sum over 16 lanes and vectorize them")
    d = parse_decline(answer, "graph")
    assert d.requests == ({"level": "schedule", "text": "rfactor the row sum over 16 lanes and vectorize them"},)
    assert d.diagnosis == "the graph is one fused softmax already."
    assert parse_cross_level_requests("- CROSS-LEVEL REQUEST: **graph**: fuse the passes") == [
        {"level": "graph", "text": "fuse the passes"}]


@pytest.mark.parametrize("text", ["none needed", "none", "no graph change needed.", "N/A", "nothing to do",
                                  "no request"])
def test_a_request_line_that_asks_for_nothing_is_no_request_and_routes_nowhere(text):
    answer = f"DECLINE\nDIAGNOSIS: the schedule is already vectorized; the graph level is fine.\n" \
             f"CROSS-LEVEL REQUEST: graph: {text}"
    d = parse_decline(answer, "schedule")
    assert d.requests == ()  # not even the level the prose names: the request line said "nothing"
    assert parse_cross_level_requests(answer) == []
    # a decline stored with such a request by an older parser is not pending either
    tree = CandidateTree([rec("a")], [declined_expansion("a", "schedule", "schedule-agent", d.diagnosis,
                                                         [{"level": "graph", "text": text}], 1)])
    assert pending_requests(tree, tree["a" * 8]) == []
    _, reason = FeedbackRouter(backend="tvm-llvm")(tree, tree["a" * 8], ["graph", "schedule"], PREF)
    assert "request" not in reason, reason
    # a real request whose text starts with "no ..." is still one
    assert parse_cross_level_requests("CROSS-LEVEL REQUEST: graph: no rfactor; fuse the two passes") == [
        {"level": "graph", "text": "no rfactor; fuse the two passes"}]


def test_a_request_reaches_only_the_candidate_it_was_made_on_and_is_served_only_there(tmp_path):
    """r7 (tvm-llvm layernorm): a decline with a schedule request made on the
    graph child ``b`` (naming ``b``'s functions) was shown to the schedule
    level of its parent ``a``, and ``a``'s schedule edit was recorded as
    serving it. The request belongs to ``b`` and what is below it: ``a``'s
    prompt does not show it, the router does not route ``a`` by it, an edit
    of ``a`` leaves it open, and ``b``'s schedule prompt shows it."""
    task = resolve_task("layernorm")
    root = rec("a", sources={"graph": "# kstrata-tvm graph\n", "schedule": "def schedule(sch):\n    pass\n"})
    b = rec("b", "graph", ("a",), expansion_id=1,
            sources={"graph": "# kstrata-tvm graph\n# fused_rows\n", "schedule": "def schedule(sch):\n    pass\n"})
    asked = [declined_expansion("b", "graph", "graph", "the graph is right",
                                [{"level": "schedule", "text": "parallelize fused_rows over rows"}], exp_id=2)]
    tree = CandidateTree([root, b], asked)
    assert pending_requests(tree, tree["a" * 8]) == []
    assert [r["text"] for r in pending_requests(tree, tree["b" * 8])] == ["parallelize fused_rows over rows"]
    router = FeedbackRouter(backend="tvm-llvm", levels=LEVELS)
    assert not router(tree, tree["a" * 8], ["schedule", "graph"], PREF)[1].startswith("decline and request")
    assert router(tree, tree["b" * 8], ["schedule", "graph"], PREF)[1].startswith("decline and request")
    # a schedule edit of the parent, made after the request, does not serve it; one of b's child does
    tree2 = CandidateTree([root, b, rec("c", "schedule", ("a",), expansion_id=3)], asked)
    assert [r["by"] for r in pending_requests(tree2, tree2["b" * 8])] == ["b" * 8]
    tree3 = CandidateTree([root, b, rec("d", "schedule", ("b",), expansion_id=3)], asked)
    assert pending_requests(tree3, tree3["b" * 8]) == []
    # the prompts: b's schedule role sees the request without a note about another candidate, a's does not
    for node, shown in (("b" * 8, True), ("a" * 8, False)):
        provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: nothing to do here.\n"])
        prop = HierarchicalProposer(StubBackend(), agents={"schedule": LevelAgent(provider, NoLog(), "schedule")},
                                    memory=MemoryStore(tmp_path / f"m{node[0]}.db"))
        ctx = ProposeContext(backend="tvm-llvm", levels=StubBackend.levels, tree=tree)
        with pytest.raises(Declined):
            prop.propose(task, tree[node], {}, "schedule", context=ctx)
        text = provider.prompts[0][1]["content"]
        assert ("# Requests from other agents for this level" in text) is shown, node
        section = text.split("# Requests from other agents for this level", 1)[-1].split("\n#", 1)[0]
        assert ("parallelize fused_rows over rows" in section) is shown, node
        assert "You edit this candidate, not" not in text


def test_a_formatted_decline_without_a_request_line_makes_no_request():
    """m22: a decline in the answer format whose diagnosis names a level in
    passing was stored as a request to that level and routed there twice."""
    answer = ("DECLINE\nDIAGNOSIS: the three nests need one read of x; I asked the graph level for that "
              "and it was served: child e9196817 fuses them. Nothing is left at the schedule level here.")
    d = parse_decline(answer, "schedule")
    assert d.requests == ()
    assert "e9196817" in d.diagnosis
    # free prose without the format still gets its one named level as a request (models that ignore it)
    prose = parse_decline("DECLINE\nThe graph level should fuse the three passes into one row loop.", "schedule")
    assert [r["level"] for r in prose.requests] == ["graph"]


def test_every_level_closed_never_routes_to_a_level_without_text():
    # graph and schedule closed on the node (e.g. written by the request/rebuild chain) and a pending
    # request for TVM's source, which has no text: the router must not pick source, whatever it is asked
    tree = CandidateTree([rec("a"), rec("b", "graph", ("a",))])
    closed = lambda t, n, lv: "written by the chain" if lv in ("graph", "schedule") else None  # noqa: E731
    router = FeedbackRouter(backend="tvm-llvm", levels=LEVELS, closed=closed)
    for pref in (PREF, ("graph", "schedule", "source"), ("schedule", "source", "graph")):
        level, reason = router(tree, tree["b" * 8], LEVELS, pref)
        assert level in ("graph", "schedule"), reason
        assert "not source: nothing to edit there" in reason and "closed on this node" in reason
    # with source text, source is open and chosen before the closed levels
    level, _ = FeedbackRouter(backend="tvm-llvm", levels=LEVELS, closed=closed,
                              known_text=lambda h: frozenset(LEVELS))(tree, tree["b" * 8], LEVELS, PREF)
    assert level == "source"
