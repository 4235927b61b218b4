"""Each policy finds the known optimum of the synthetic landscape within budget."""

from __future__ import annotations

import math
import random

import pytest
from search_fakes import BEST, FakeBackend, FakeEvaluator, FakeProposer, FakeTask

from kstrata.search import Budget, SearchSettings, make_policy, optimize
from kstrata.search.policies import POLICIES, UCTPolicy
from kstrata.search.policies.map_elites import MapElitesPolicy, descriptor

# evaluations each needs here (measured): greedy 29, beam 48, uct 55, map-elites 40
BUDGET = {"greedy": 35, "beam": 55, "uct": 60, "map-elites": 50}


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_policy_finds_known_best(name, tmp_path):
    ev = FakeEvaluator()
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), ev, name,
                   Budget(evaluations=BUDGET[name]), tmp_path / "run")
    assert res.best is not None and res.best.speedup == pytest.approx(BEST)
    seen = [tuple(sorted(c.items())) for c in ev.calls]
    assert len(seen) == len(set(seen)), "a source was evaluated twice"
    assert res.spent["evaluations"] <= BUDGET[name]


def test_map_elites_keeps_several_cells(tmp_path):
    pol = MapElitesPolicy()
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), pol,
                   Budget(evaluations=30), tmp_path / "run")
    cells = pol.archive(res.tree)
    assert len(cells) >= 4
    assert {c[0] for c in cells} >= {"graph", "schedule"}
    assert {c[1] for c in cells} >= {"memory", "compute"}
    assert len({c[2] for c in cells}) >= 2
    # each elite is the best of its cell
    for cell, elite in cells.items():
        rivals = [n for n in res.tree if n.correct and descriptor(n) == cell]
        assert elite.score == max(n.score for n in rivals)


def test_uct_reward_and_exploration():
    pol = UCTPolicy()
    assert pol.c == pytest.approx(math.sqrt(2))

    class N:
        def __init__(self, correct, speedup):
            self.correct, self.speedup = correct, speedup

    assert pol.reward(N(False, None)) == 0.0
    assert pol.reward(N(True, 1.0)) == pytest.approx(0.5)
    assert pol.reward(N(True, 1e9)) == pytest.approx(1.0)  # clipped
    assert pol.reward(N(True, math.exp(-1))) == pytest.approx(0.25)


def test_uct_explores_more_than_greedy(tmp_path):
    """With the same budget UCT spreads expansions over more distinct nodes
    near the root than greedy, which follows one path."""
    runs = {}
    for name in ("greedy", "uct"):
        runs[name] = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), name,
                              Budget(evaluations=25), tmp_path / name)
    depth = {k: max(n.depth for n in r.tree) for k, r in runs.items()}
    assert depth["uct"] < depth["greedy"]


def test_beam_keeps_width(tmp_path):
    pol = make_policy("beam", width=2)
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), pol,
                   Budget(evaluations=40), tmp_path / "run",
                   settings=SearchSettings(lookahead_expansions=0))
    expanded_per_depth: dict[int, set] = {}
    for e in res.tree.expansion_log:
        expanded_per_depth.setdefault(res.tree[e.candidate].depth, set()).add(e.candidate)
    assert all(len(v) <= 2 for v in expanded_per_depth.values())
    assert len(expanded_per_depth) >= 3


def test_make_policy_rejects_unknown_names():
    with pytest.raises(ValueError, match="greedy"):
        make_policy("annealing")
    assert make_policy("map_elites").name == "map-elites"


def test_policies_are_deterministic_given_rng(tmp_path):
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "map-elites",
                   Budget(evaluations=15), tmp_path / "run")
    pol = MapElitesPolicy()
    pol.pre_search(res.tree, ("graph", "schedule"))
    picks = {pol.select(res.tree, random.Random("1:5")).node for _ in range(3)}
    assert len(picks) == 1


def test_greedy_breaks_a_tie_of_untrusted_timings_by_fewest_expansions():
    """Every timing untrusted (all score 0): greedy re-expanded the start three
    times per level before looking at a correct child (an LLM may be asked 3x
    per node and level); now the least expanded of the tied nodes goes first."""
    from kstrata.search.tree import UNTRUSTED_PREFIX, CandidateTree
    from kstrata.store.records import CandidateRecord, EvaluationRecord, MeasurementRecord

    def node(h, parents=()):
        r = CandidateRecord(hash=h * 64, sources={}, level="schedule" if parents else None, role="r",
                            proposer="p", parents=tuple(p * 64 for p in parents), status="evaluated")
        r.evaluation = EvaluationRecord(verdict="correct")
        r.measurement = MeasurementRecord(speedup=0.5, findings=[f"{UNTRUSTED_PREFIX} noisy"])
        return r

    tree = CandidateTree([node("a"), node("b", ("a",))])
    pol = make_policy("greedy")
    pol.max_per_level = 3
    pol.pre_search(tree, ["graph", "schedule"])
    tree["a" * 64].expansions.update({"schedule": 1})
    assert pol.select(tree, random.Random(0)).node == "b" * 64
    tree["b" * 64].expansions.update({"schedule": 2})
    assert pol.select(tree, random.Random(0)).node == "a" * 64
