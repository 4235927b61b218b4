"""A level where a model's answer on a candidate already made a correct child
is closed on that candidate: the next calls go to the children (asked again,
models gave variants of their own answer or declined, 12 of 21 and 9 of 16
calls in the queue runs). A level whose answers failed stays open, so the
model is asked again with its failure in the prompt."""

from __future__ import annotations

from types import SimpleNamespace

from kstrata.agents.llm_agent import editable_on, editable_only
from kstrata.search.policies import make_policy


def _node(h, children=(), level=None, role="", verdict=None):
    return SimpleNamespace(hash=h, children=list(children), level=level, role=role,
                           correct=verdict == "correct", sources={"source": "x"})


def _tree(*nodes):
    return {n.hash: n for n in nodes}


def test_a_level_with_a_correct_answer_is_closed_and_one_with_failures_is_not():
    text = {"p": frozenset({"source"})}
    ok = _node("c1", level="source", role="source-agent", verdict="correct")
    bad = _node("c2", level="source", role="source-agent", verdict="incorrect")
    ruled = _node("c3", level="source", role="source-rules", verdict="correct")
    for children, expect in ((["c1"], []), (["c2"], ["source"]), (["c3"], ["source"]), ([], ["source"])):
        p = _node("p", children)
        tree = _tree(p, ok, bad, ruled)
        assert editable_on(p, "triton-interp", ("source",), text, set(), tree) == expect, children
    # without a tree (the policy has judged nothing yet): only declines close a level
    p = _node("p", ["c1"])
    assert editable_on(p, "triton-interp", ("source",), text, set()) == ["source"]
    assert editable_on(p, "triton-interp", ("source",), text, {("p", "source")}) == []


def test_the_policy_passes_the_tree_it_judges_on():
    pol = make_policy("greedy")
    pol.levels = ["source"]
    got = []
    editable_only(pol, lambda node, tree, **kw: got.append(tree) or list(pol.levels))
    tree = SimpleNamespace(root=None)
    node = SimpleNamespace(hash="n", evaluated=True, correct=True, expansions={lv: 0 for lv in pol.levels})
    assert pol.expandable(tree, node) and got[-1] is tree
