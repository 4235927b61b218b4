"""The root's rationale says whose start it is (newcomer nc14: `show` called a
user's --initial kernel "the backend's untuned starting point")."""

from __future__ import annotations

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask

from kstrata.search import Budget, optimize
from kstrata.search.tree import CandidateTree
from kstrata.store.run_store import RunStore


def _root_rationale(tmp_path, name, initial):
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=1),
                   tmp_path / name, initial_sources=initial)
    with RunStore.open(res.run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
        return tree.root.record.rationale


def test_an_initial_file_is_named_as_given_and_the_shipped_start_as_the_backends(tmp_path):
    shipped = _root_rationale(tmp_path, "a", None)
    given = _root_rationale(tmp_path, "b", {"source": "x = 2\n"})
    # the CLI passes the backend's own start when no --initial is given (newcomer nc17: show called it given)
    passed = _root_rationale(tmp_path, "c", FakeBackend().initial_sources(FakeTask()))
    assert shipped == passed == "the backend's untuned starting point"
    assert given == "the given starting point (--initial)"
