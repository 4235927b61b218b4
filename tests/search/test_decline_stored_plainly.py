"""A decline is an answer, not a crash: the loop stores its record
(``Declined: {json}``) without a traceback, and the tree reads it back."""

from __future__ import annotations

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask

from kstrata.agents.router import Declined
from kstrata.search import Budget, optimize


class DecliningProposer(FakeProposer):
    """Declines every expansion, with a diagnosis and a request to another level."""

    name = "declining"

    def propose(self, task, candidate, feedback, level, context=None):
        raise Declined(level, "schedule", "the schedule is already at the roofline here",
                       [{"level": "graph", "text": "fuse the two reductions"}])


def test_the_loop_stores_a_decline_without_a_traceback(tmp_path):
    res = optimize(FakeTask(), FakeBackend(), DecliningProposer(), FakeEvaluator(), "greedy",
                   Budget(evaluations=3, proposer_calls=2), tmp_path / "run")
    errors = [e.error for e in res.tree.expansion_log if e.error]
    assert errors and all(e.startswith("Declined: {") and "Traceback" not in e and "\n" not in e
                          for e in errors)
    (first, *_) = res.tree.declines()
    assert first["diagnosis"] == "the schedule is already at the roofline here"
    assert first["requests"] == [{"level": "graph", "text": "fuse the two reductions"}]
