"""The search loop stores answers a proposer could not use (newcomer nc18: an
unusable SEARCH/REPLACE answer left n_malformed=0 and no error in run.db)."""

from __future__ import annotations

from search_fakes import FakeBackend, FakeEvaluator, FakeTask


def test_the_loop_counts_unusable_answers_as_malformed_and_stores_why(tmp_path):
    from kstrata.agents.base import ProposalBatch
    from kstrata.search import Budget, optimize
    from kstrata.store.run_store import RunStore

    class Unusable:
        name = "llm:scripted"

        def propose(self, task, candidate, feedback, level, *, context):
            return ProposalBatch([], [], problems=["unusable answer (no_match): SEARCH text not found: 'y = x'"])

    res = optimize(FakeTask(), FakeBackend(), Unusable(), FakeEvaluator(), "greedy", Budget(evaluations=3,
                   proposer_calls=1), tmp_path / "run")
    with RunStore.open(res.run_dir) as store:
        (exp,) = store.expansions()
    assert exp.n_malformed == 1 and "SEARCH text not found" in (exp.error or "")


def test_a_decline_after_unusable_answers_counts_them(tmp_path):
    from kstrata.agents.router import Declined
    from kstrata.search import Budget, optimize
    from kstrata.store.run_store import RunStore

    class DeclinesAfter:
        name = "llm:scripted"

        def propose(self, task, candidate, feedback, level, *, context):
            d = Declined(level, "single", "nothing more", [])
            d.problems = ["unusable answer (edit_no_match): the SEARCH text of edit block 1 does not occur"]
            raise d

    res = optimize(FakeTask(), FakeBackend(), DeclinesAfter(), FakeEvaluator(), "greedy",
                   Budget(evaluations=3, proposer_calls=1), tmp_path / "run")
    with RunStore.open(res.run_dir) as store:
        exps = store.expansions()
    assert exps and all(e.n_malformed == 1 for e in exps)
    assert len(res.tree.declines()) == len(exps)  # each decline is kept as a decline
