"""An untrusted re-timing (a busy machine's) never replaces a trusted reading
nor costs a run its ranked best, and every view agrees with the summary
(newcomer nc16: ``kstrata retime`` at load 3.4 replaced the best's trusted
1.16x by a contended 1.68x and re-timed the start to a contended 1.85x; the
summary then ranked nothing, the tree called trusted candidates "slower than
its parent" against the start's untrusted reading, the report plotted 1.15x)."""

from __future__ import annotations

import json

from rich.console import Console
from search_fakes import FakeBackend, FakeTask, parse

from kstrata.bench.results import load_results
from kstrata.cli import retime as R
from kstrata.search import Budget, SearchSettings, optimize
from kstrata.search.tree import UNTRUSTED_PREFIX, CandidateTree
from kstrata.search.views import reading, result_table, run_tree
from kstrata.store.run_store import RunStore

BUSY = (f"{UNTRUSTED_PREFIX} contended: other processes kept 1.63 of 2 CPUs busy during this timing, which used "
        "2 thread(s); candidate and baseline were not timed alike. Time it again on a quiet machine")
FIRST = {1: (0.966, [BUSY]), 2: (1.16, [])}  # tile -> (speedup, findings) at the search's first timing
RETIMED = {1: 1.85, 2: 1.68}  # tile -> the re-timed reading, contended


def _m(s, findings, final=False):
    return {"median_ms": 1 / s, "speedups": {"eager": {"value": s, "ci": [s * .85, s * 1.18]}},
            "findings": list(findings), **({"raw": {"final_round": True}} if final else {})}


class Evaluator:
    def evaluate(self, task, backend, srcs):
        return {"verdict": "correct"}, _m(*FIRST[parse(srcs)["tile"]])

    def final_round(self, task, backend, srcs):  # every re-timing on the busy machine is contended
        return _m(RETIMED[parse(srcs)["tile"]], [BUSY], final=True)


class Proposer:
    name = "fixed"

    def propose(self, task, candidate, feedback, level, *, context):
        from kstrata.agents.base import Proposal

        return [] if context.step else [Proposal.edit(candidate.sources, "schedule", "tile=2\norder=0\n", "r")]


def _text(renderable) -> str:
    console = Console(width=400, record=True)
    console.print(renderable, crop=False)
    return console.export_text()


def test_a_contended_retiming_keeps_the_trusted_best(tmp_path, monkeypatch):
    res = optimize(FakeTask(), FakeBackend(), Proposer(), Evaluator(), "greedy", Budget(evaluations=2),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0, lookahead_expansions=0))
    with RunStore.open(res.run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
    root, child = tree.root, next(n for n in tree if n.parents)
    assert tree.best_correct() is child and child.timing_trusted
    stop = json.loads((res.run_dir / "summary.json").read_text())["stop_reason"]
    monkeypatch.setattr(R, "open_run", lambda run_dir: R.RunInfo(res.run_dir, FakeTask(), FakeBackend(), None,
                                                                ("eager",), stop))
    rows = {r["hash"]: r for r in R.retime_run(res.run_dir, evaluator=Evaluator())}
    assert set(rows) == {root.hash, child.hash}
    assert rows[child.hash]["kept"] and not rows[child.hash]["trusted"] and rows[child.hash]["after"] == 1.68
    assert not rows[root.hash]["kept"]  # an untrusted reading is replaced by the newer untrusted one
    assert child.hash[:12] not in " ".join(R.unranked_reasons(list(rows.values()), res.run_dir))

    with RunStore.open(res.run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
    r = reading(tree[child.hash])
    assert (r.value, r.trusted, r.retimed) == (1.16, True, False)  # the trusted first timing stands
    assert reading(tree[root.hash]).value == 1.85 and not tree[root.hash].timing_trusted
    # the start's contended 1.85x does not take the best away: the summary ranks the child
    assert tree.best_correct().hash == child.hash
    summary = json.loads((res.run_dir / "summary.json").read_text())
    assert summary["best"]["hash"] == child.hash and summary["best"]["speedup"] == 1.16
    assert "none ranked" not in _text(result_table(res.run_dir))
    # the tree: the child's trusted reading, not "slower than" the start's untrusted one; the start marked
    lines = _text(run_tree(res.run_dir)).splitlines()
    child_line = next(ln for ln in lines if child.hash[:8] in ln)
    root_line = next(ln for ln in lines if root.hash[:8] in ln)
    assert "1.16x" in child_line and "untrusted" not in child_line and "slower than its parent" not in child_line
    assert "1.85x re-timed unranked (untrusted timing)" in root_line
    # the report (its start counted) names the summary's best and its reading
    (outcome,) = load_results(res.run_dir, count_initial=True).outcomes
    assert outcome.speedup == 1.16 and outcome.roofline_trusted
