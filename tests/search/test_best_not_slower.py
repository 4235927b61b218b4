"""The reported best is never a candidate that reads slower than the initial one
(issue 18: a tvm-cuda run reported a 0.739x candidate as best while its initial,
whose timing was untrusted, read 1.22x)."""

from __future__ import annotations

import json

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask, parse

from kstrata.search import Budget, CandidateTree, optimize
from kstrata.search.tree import UNTRUSTED_PREFIX
from kstrata.store import RunStore

ROOT_READING = 1.22


class UntrustedStartEvaluator(FakeEvaluator):
    """The initial candidate reads ``ROOT_READING`` with an untrusted timing (as
    under the roofline floor on a GPU); every other candidate is timed, trusted,
    at its landscape speedup scaled to below the initial's reading."""

    def __init__(self, others_faster: bool = False):
        super().__init__()
        self.others_faster = others_faster

    def evaluate(self, task, backend, srcs):
        ev, m = super().evaluate(task, backend, srcs)
        if m is None:
            return ev, m
        initial = parse(srcs) == {"fuse": 0, "tile": 1, "order": 0}
        s = ROOT_READING if initial else 1.5 if self.others_faster else 0.5 + (0.1 * parse(srcs)["tile"]) % 0.7
        m = {**m, "median_ms": 10.0 / s, "speedups": {"eager": {"value": s, "ci": [s * 0.95, s * 1.05]}},
             "findings": [f"{UNTRUSTED_PREFIX} below the roofline floor after 2 re-timing(s)"] if initial else []}
        return ev, m


def _run(tmp_path, evaluator):
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), evaluator, "greedy",
                   Budget(evaluations=8), tmp_path / "run")
    with RunStore.open(res.run_dir) as s:
        tree = CandidateTree.from_store(s)
    summary = json.loads((res.run_dir / "summary.json").read_text())
    return res, tree, summary


def test_slower_trusted_candidates_do_not_beat_an_untrusted_start(tmp_path):
    res, tree, summary = _run(tmp_path, UntrustedStartEvaluator())
    root = tree.root
    others = [n for n in tree if n.correct and n is not root]
    assert others and all(n.timing_trusted and n.speedup < root.speedup for n in others)
    assert not root.timing_trusted  # so it scores 0 and ranks below every other correct node
    assert tree.ranked()[0] is not root
    assert tree.best_correct() is root and res.best.hash == root.hash
    # the root's timing is untrusted: best/ holds it and no speedup is claimed
    assert summary["best"]["hash"] == root.hash and summary["best"]["speedup"] is None
    assert (res.run_dir / "best").is_dir()


def test_faster_trusted_candidate_still_wins(tmp_path):
    res, tree, summary = _run(tmp_path, UntrustedStartEvaluator(others_faster=True))
    best = tree.best_correct()
    assert best is not tree.root and best.speedup > ROOT_READING
    assert summary["best"]["hash"] == best.hash and summary["best"]["speedup"] > ROOT_READING


def test_within_a_subtree_without_the_root_is_unchanged(tmp_path):
    _, tree, _ = _run(tmp_path, UntrustedStartEvaluator())
    child = tree.children(tree.root.hash)[0]
    sub = tree.best_correct(within=child.hash)
    assert sub is None or sub is not tree.root
