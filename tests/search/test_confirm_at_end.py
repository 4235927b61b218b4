"""``--confirm end``: the full hidden protocol verifies the run's best once,
when the search stops, instead of every would-be best; a best that fails
there loses its rank (verdict and timing) to the next best, which is
confirmed in its place."""

from __future__ import annotations

import json

import pytest
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask, parse, speedup

from kstrata.search import Budget, optimize
from kstrata.search.evaluators import VerifyMeasureEvaluator
from kstrata.search.loop import MAX_CONFIRMATIONS


class ConfirmingEvaluator(FakeEvaluator):
    """Screens as FakeEvaluator does; at the full scope, the ``fail`` fastest
    candidates fail (a shape the screening did not cover)."""

    def __init__(self, fail: int = 0):
        super().__init__()
        self.fail, self.confirmed = fail, []

    def confirm(self, task, backend, srcs):
        self.confirmed.append(parse(srcs))
        if len(self.confirmed) <= self.fail:
            return {"verdict": "incorrect", "check": "allclose", "n_public": 2, "n_hidden": 40,
                    "feedback": [{"level": "source", "message": "wrong at B=17, D=65537"}]}
        return {"verdict": "correct", "feedback": [], "n_public": 2, "n_hidden": 40}


def _run(tmp_path, ev, name="run", resume=False):
    return optimize(FakeTask(), FakeBackend(), FakeProposer(), ev, "greedy", Budget(evaluations=10),
                    tmp_path / name, resume=resume)


def test_the_runs_best_is_confirmed_once_at_the_end(tmp_path):
    ev = ConfirmingEvaluator()
    res = _run(tmp_path, ev)
    (c,) = ev.confirmed
    assert speedup(c["fuse"], c["tile"], c["order"]) == pytest.approx(res.best.speedup)
    evidence = res.best.record.evaluation.evidence
    assert evidence["confirmed"] is True and res.best.record.evaluation.n_hidden == 40
    # resumed with more budget: the confirmed best is not verified again unless a new one takes over
    before = res.best.hash
    ev2 = ConfirmingEvaluator()
    res2 = optimize(FakeTask(), FakeBackend(), FakeProposer(), ev2, "greedy", Budget(evaluations=10),
                    tmp_path / "run", resume=True)
    assert res2.best.hash == before and ev2.confirmed == []


def test_a_best_that_fails_the_full_protocol_hands_its_rank_to_the_next(tmp_path):
    screened = _run(tmp_path, ConfirmingEvaluator(), "screened").best
    ev = ConfirmingEvaluator(fail=1)
    res = _run(tmp_path, ev)
    assert len(ev.confirmed) == 2
    failed = [n for n in res.tree if n.evaluated and n.record.evaluation.evidence
              and n.record.evaluation.evidence.get("confirmed") is False]
    assert len(failed) == 1 and failed[0].verdict == "incorrect" and failed[0].measurement is None
    assert failed[0].speedup is None and failed[0].hash == screened.hash
    assert res.best is not None and res.best.hash != screened.hash
    assert res.best.record.evaluation.evidence["confirmed"] is True
    assert res.best.speedup <= screened.speedup
    summary = json.loads((res.run_dir / "summary.json").read_text())
    assert summary["best"]["hash"] == res.best.hash and summary["best"]["confirmed"] is True


def test_confirmation_stops_after_max_failures(tmp_path):
    ev = ConfirmingEvaluator(fail=100)
    res = _run(tmp_path, ev)
    assert len(ev.confirmed) == MAX_CONFIRMATIONS
    assert res.best is not None and not res.best.record.evaluation.evidence
    # the summary says the best was only screened
    assert json.loads((res.run_dir / "summary.json").read_text())["best"]["confirmed"] is False


def test_the_default_confirms_each_would_be_best_and_not_at_the_end():
    assert VerifyMeasureEvaluator(secret="s").confirm(None, None, {}) is None
    same = VerifyMeasureEvaluator(secret="s", confirm_at="end", confirm_scope="small")
    assert same.confirm(None, None, {}) is None  # the screening's own scope: nothing more to verify


def test_a_best_the_confirmation_did_not_reach_is_called_unverified(tmp_path):
    """Newcomer nc22: three bests failed the full scope, and the table called the
    fourth, never confirmed, "the first correct candidate" with no warning."""
    from rich.console import Console

    from kstrata.search.views import result_table

    res = _run(tmp_path, ConfirmingEvaluator(fail=100))
    console = Console(width=200, record=True)
    console.print(result_table(res.run_dir))
    text = console.export_text()
    assert "not at the full scope" in text and res.best.hash[:12] in text and "kstrata export" in text
    from kstrata.search.views import next_steps

    assert "(not verified at the full scope: the export verifies it there first)" in next_steps(res.run_dir)
    confirmed = _run(tmp_path, ConfirmingEvaluator(), "confirmed")
    console = Console(width=200, record=True)
    console.print(result_table(confirmed.run_dir))
    assert "not at the full scope" not in console.export_text()
