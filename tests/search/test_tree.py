"""Candidate tree queries and rendering."""

from __future__ import annotations

from rich.console import Console
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask

from kstrata.agents.base import Proposal
from kstrata.search import Budget, CandidateTree, optimize
from kstrata.store import RunStore


class CrossProposer(FakeProposer):
    """Adds one crossover child with two parents on the 3rd expansion."""

    def propose(self, task, candidate, feedback, level, *, context):
        batch = super().propose(task, candidate, feedback, level, context=context)
        if context.step == 2:
            other = context.tree.root
            batch.proposals.append(Proposal(
                sources={"graph": "fuse=1\n", "schedule": "tile=16\norder=1\n"}, level="schedule",
                role="crossover", rationale="mix", extra_parents=(other.hash,)))
        return batch


def test_tree_queries_and_render(tmp_path):
    res = optimize(FakeTask(), FakeBackend(), CrossProposer(), FakeEvaluator(), "greedy",
                   Budget(evaluations=20), tmp_path / "run")
    with RunStore.open(res.run_dir) as s:
        tree = CandidateTree.from_store(s)
    root = tree.root
    assert root.level is None and root.role == "initial" and root.depth == 0
    best = tree.best_correct()
    path = tree.path_to_root(best.hash)
    assert path[0] is best and path[-1] is root and len(path) == best.depth + 1
    for n in tree:
        for c in tree.children(n.hash):
            assert n.hash in c.parents and c.depth > n.depth
    cross = next(n for n in tree if n.role == "crossover")
    assert len(cross.parents) == 2 and cross.hash in {c.hash for c in tree.children(root.hash)}
    assert {n.hash for n in tree.subtree(root.hash)} == set(tree.nodes)
    assert sum(tree.verdict_counts().values()) == 20
    assert all(n.score <= best.score for n in tree)
    assert best.sources  # loaded with sources

    console = Console(record=True, width=200)
    console.print(tree.render("run"))
    text = console.export_text()
    assert best.hash[:8] in text and "initial" in text and "levels take turns" in text
    assert f"{best.speedup:.3g}x" in text and "+1 parent(s)" in text
    assert text.count("\n") >= len(tree)  # every node drawn once
