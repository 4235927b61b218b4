"""A failed answer that the same agent fixed on another branch since
(queue round rt58, a resumed hierarchical run on log_softmax): the root's
graph prompt said "Your last answer for this candidate failed ... a fix of
that answer, however small, is what is wanted now", though the graph agent's
fix of that change, made later on the root's schedule child, was correct and
listed only as a history line: the prompt asked for the same fix again."""

from __future__ import annotations

import pytest
from agent_fakes import rec
from test_prompt_relay import _ctx, _tree_after_failed_graph

from kstrata.agents.router import Declined
from kstrata.search.tree import CandidateTree
from kstrata.store.records import ExpansionRecord


@pytest.mark.parametrize("kind", ["llm", "hierarchical"])
def test_a_later_answer_at_the_level_is_named_beside_the_failed_one(kind):
    task, prop, provider, tree = _tree_after_failed_graph(kind)
    fixed = rec("g", "graph", ("s",), sources={**tree["s" * 8].record.sources, "graph": "# kstrata-tvm graph\n# fixed\n"},
                expansion_id=3, rationale="fix of my last graph change", speedup=1.8)
    fixed.seq = 3
    tree = CandidateTree([n.record for n in tree] + [fixed],
                         [ExpansionRecord(candidate="a" * 8, level="graph", proposer=kind, id=1),
                          ExpansionRecord(candidate="a" * 8, level="schedule", proposer=kind, id=2),
                          ExpansionRecord(candidate="s" * 8, level="graph", proposer=kind, id=3)])
    with pytest.raises(Declined):
        prop.propose(task, tree["a" * 8], {}, "graph", context=_ctx(tree))
    user = provider.prompts[1][1]["content"]
    assert "# Your last answer for this candidate failed" in user
    assert ("Since then, this agent answered at the `graph` level on other candidates of this run (latest first): "
            "gggggggg (made on ssssssss) -> correct, 1.8x") in user, user
    assert "(unless a later answer of yours elsewhere in the run fixed it already: see there)" in user

