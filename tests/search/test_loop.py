"""The optimize loop: budgets, stopping rules, lookahead, errors as data, artifacts."""

from __future__ import annotations

import json

import pytest
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask, sources

from kstrata.search import Budget, SearchSettings, optimize
from kstrata.store import RunStore, StoreError


def run(tmp_path, budget, proposer=None, evaluator=None, policy="greedy", **kw):
    return optimize(FakeTask(), FakeBackend(), proposer or FakeProposer(),
                    evaluator or FakeEvaluator(), policy, budget, tmp_path / "run", **kw)


def db_count(res, table):
    with RunStore.open(res.run_dir) as s:
        return s.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


@pytest.mark.parametrize("n", [1, 7, 13])
def test_evaluation_limit_is_exact(tmp_path, n):
    ev = FakeEvaluator()
    res = run(tmp_path, Budget(evaluations=n), evaluator=ev)
    assert len(ev.calls) == n == res.spent["evaluations"] == db_count(res, "evaluations")
    assert "evaluations limit" in res.stop_reason


def test_proposer_call_limit_is_exact(tmp_path):
    res = run(tmp_path, Budget(evaluations=None, proposer_calls=4), proposer=FakeProposer(tokens=10))
    assert res.spent["proposer_calls"] == 4 == db_count(res, "proposer_calls")
    assert db_count(res, "expansions") == 4 and "proposer_calls limit" in res.stop_reason
    assert res.tree.pending() == []  # everything proposed was evaluated


def test_token_and_cost_limits_stop_at_first_reach(tmp_path):
    res = run(tmp_path, Budget(evaluations=None, tokens_in=250), proposer=FakeProposer(tokens=100))
    assert res.spent["tokens_in"] == 300 and "tokens_in" in res.stop_reason
    res = run(tmp_path / "b", Budget(evaluations=None, cost_usd=0.025), proposer=FakeProposer(tokens=1))
    assert res.spent["cost_usd"] == pytest.approx(0.03) and "cost_usd" in res.stop_reason


def test_wall_clock_limit(tmp_path):
    res = run(tmp_path, Budget(evaluations=None, wall_clock_s=0.3), evaluator=FakeEvaluator(delay=0.05))
    assert "wall_clock_s" in res.stop_reason
    assert 0.3 <= res.spent["wall_s"] < 0.3 + 0.5


def test_patience_and_roofline_target(tmp_path):
    res = run(tmp_path, Budget(evaluations=None, patience=3))
    assert res.stop_reason.startswith("patience") and res.tree.expansions_since_improvement() == 3
    res = run(tmp_path / "b", Budget(evaluations=None, target_roofline=0.5))
    assert res.stop_reason.startswith("target") and res.best.roofline_fraction >= 0.5


def test_lookahead_keeps_a_graph_change_that_was_slower_at_creation(tmp_path):
    start = sources(fuse=0, tile=8, order=1)  # the optimum of the fuse=0 graph: 2.0x
    common = dict(initial_sources=start, budget=Budget(evaluations=6))
    on = run(tmp_path / "on", settings=SearchSettings(lookahead_expansions=1), **common)
    off = run(tmp_path / "off", settings=SearchSettings(lookahead_expansions=0), **common)

    fused = next(n for n in on.tree if n.level == "graph")
    assert fused.slower_at_creation and fused.speedup < on.tree.root.speedup
    assert on.best.speedup > 2.0 and fused.hash in on.tree.ancestors(on.best.hash)
    kinds = [e.kind for e in on.tree.expansion_log]
    assert kinds == ["policy", "lookahead"]
    assert "lookahead 1/1: schedule edit granted to graph change" in on.best.router_reason
    assert on.lookahead["wins_from_slower"] >= 1 and on.lookahead["fraction"] == 1.0
    assert off.best.speedup == pytest.approx(2.0)  # without it the rewrite is never tuned in time
    assert off.lookahead["wins"] == 0


def test_errors_are_data(tmp_path):
    class Flaky(FakeEvaluator):
        def evaluate(self, task, backend, srcs):
            if "tile=4" in srcs["schedule"]:
                raise OSError("device fell off the bus")
            return super().evaluate(task, backend, srcs)

    res = run(tmp_path, Budget(evaluations=30), evaluator=Flaky(),
              proposer=FakeProposer(fail_steps=(1,), malformed_steps=(2,)))
    exps = res.tree.expansion_log
    assert "RuntimeError: provider down" in exps[1].error and exps[1].n_new == 0
    assert exps[2].n_malformed == 1 and "malformed" in exps[2].error
    crashed = [n for n in res.tree if n.evaluation and n.evaluation.check == "evaluator_exception"]
    assert crashed and all(n.verdict == "runtime_error" for n in crashed)
    assert res.spent["evaluations"] > 10  # the run carried on past every error


def test_run_dir_contents_and_resume_guards(tmp_path):
    res = run(tmp_path, Budget(evaluations=10))
    d = res.run_dir
    cfg = json.loads((d / "config.json").read_text())
    assert cfg["policy"]["name"] == "greedy" and cfg["budget"]["evaluations"] == 10
    summary = json.loads((d / "summary.json").read_text())
    assert summary["best"]["hash"] == res.best.hash and summary["verdicts"] == res.verdict_counts
    assert (d / "best" / "schedule.txt").read_text() == (
        d / "candidates" / res.best.hash / "schedule.txt").read_text()
    with pytest.raises(StoreError, match="already holds a run"):
        run(tmp_path, Budget(evaluations=10))

    class Other(FakeTask):
        pass

    with pytest.raises(StoreError, match="not other"):
        optimize(Other(name="other", digest="0" * 64), FakeBackend(), FakeProposer(), FakeEvaluator(),
                 "greedy", Budget(), d, resume=True)
    # resuming with a larger budget continues where it stopped
    more = run(tmp_path, Budget(evaluations=15), resume=True)
    assert more.spent["evaluations"] == 15 and db_count(more, "evaluations") == 15


def test_a_propose_that_fails_before_any_model_call_is_not_charged_a_call(tmp_path):
    """A prompt that did not render (a template error) reached no model: the
    expansion is recorded and charged, a proposer call is not (5 of 8 calls of
    a model-in-the-loop run were burned this way in under a second)."""
    res = run(tmp_path, Budget(evaluations=8), proposer=FakeProposer(fail_steps=(1, 2)))
    exps = res.tree.expansion_log
    assert all("provider down" in exps[i].error for i in (1, 2))
    assert res.spent["proposer_calls"] == len(exps) - 2 and res.spent["expansions"] == len(exps)
