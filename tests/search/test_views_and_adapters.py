"""CLI views of a run, and the adapters from verifier/timer results to records."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from rich.console import Console
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask

from kstrata.measure.stats import RatioCI
from kstrata.search import Budget, optimize
from kstrata.search.candidate import to_evaluation_record, to_measurement_record
from kstrata.search.evaluators import VerifyMeasureEvaluator
from kstrata.search.views import candidate_view, result_table, run_tree
from kstrata.store import StoreError
from kstrata.verdict import Verdict
from kstrata.verify import Evaluation


def _text(renderable) -> str:
    console = Console(record=True, width=160)
    console.print(renderable)
    return console.export_text()


def test_views(tmp_path):
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy",
                   Budget(evaluations=8), tmp_path / "run")
    tree = _text(run_tree(res.run_dir))
    assert "synthetic on fake" in tree and res.best.hash[:8] in tree
    shown = _text(candidate_view(res.run_dir, res.best.hash[:7]))
    assert "speedup vs eager" in shown and "schedule source" in shown and "path to root" in shown
    table = _text(result_table(res.run_dir))
    assert "evaluations limit 8" in table and res.best.hash[:12] in table
    with pytest.raises(StoreError, match="no candidate"):
        candidate_view(res.run_dir, "zzzz")


def test_adapters_read_the_verifier_and_timer_types():
    ev = Evaluation(verdict=Verdict.INCORRECT, check="tolerance", evidence={"message": "off"},
                    feedback=[{"kind": "x", "level": "schedule", "text": "t", "data": {}}],
                    public_tests=3, hidden_tests=9, seconds=1.5)
    r = to_evaluation_record(ev)
    assert (r.verdict, r.check, r.n_public, r.n_hidden, r.wall_s) == ("incorrect", "tolerance", 3, 9, 1.5)
    ci = RatioCI(point=2.0, low=1.8, high=2.3, confidence=0.95, n_resamples=100)
    m = to_measurement_record({"median_ms": 1.0, "speedups": {"compile": 1.2, "eager": ci},
                               "roofline_fraction": 0.3, "bound": "compute"}, "eager")
    assert m.speedup == 2.0 and m.speedups[1].ci_low == 1.8 and m.speedups[0].value == 1.2
    single = to_measurement_record(SimpleNamespace(median_ms=2.0, speedup=1.5, baseline="eager"))
    assert single.speedup == 1.5 and single.speedups[0].baseline == "eager"


def test_verify_measure_evaluator_glue(monkeypatch):
    import kstrata.measure.candidate as mc
    import kstrata.verify as v

    ok = Evaluation(verdict=Verdict.CORRECT, public_tests=2, hidden_tests=4)
    monkeypatch.setattr(v, "verify_candidate", lambda *a, **k: ok)
    timed = SimpleNamespace(
        candidate=SimpleNamespace(median=0.5), suspicious=["fast"],
        speedup=RatioCI(point=3.0, low=2.5, high=3.5, confidence=0.95, n_resamples=10),
        roofline={"candidate": {"fraction": 0.7, "bound": "memory"}}, to_dict=lambda: {"m": 1},
    )

    def fake_time(backend, task, sources, shape=None, *, baseline, **kw):
        if baseline == "metaschedule":
            raise RuntimeError("no tvm")
        return timed

    monkeypatch.setattr(mc, "time_candidate", fake_time)
    e = VerifyMeasureEvaluator(secret="s", baselines=("eager", "metaschedule"))
    got_ev, got_m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    rec = to_measurement_record(got_m)
    assert got_ev is ok and rec.speedup == 3.0 and rec.roofline_fraction == 0.7
    assert rec.bound == "memory" and got_m["raw"]["metaschedule"] == {"error": "RuntimeError: no tvm"}
    # the timing stayed under the roofline floor through the re-timings: kept, but not ranked
    assert any(str(f).startswith("untrusted timing:") for f in rec.findings)
    e = VerifyMeasureEvaluator(secret="s", baselines=("metaschedule",))
    bad, none = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    assert bad.verdict is Verdict.RUNTIME_ERROR and bad.check == "timing" and none is None


def test_doubtful_best_is_retimed_and_untrusted_one_not_ranked(monkeypatch):
    """A would-be best timed noisy is re-timed; the clean re-timing replaces it.
    One that stays doubtful is stored, but the tree ranks it like an untimed node."""
    import kstrata.measure.candidate as mc
    import kstrata.verify as v
    from kstrata.search.tree import Node

    ok = Evaluation(verdict=Verdict.CORRECT, public_tests=2, hidden_tests=4)
    monkeypatch.setattr(v, "verify_candidate", lambda *a, **k: ok)

    def timing(point, noisy):
        return SimpleNamespace(candidate=SimpleNamespace(median=1.0), suspicious=[], noisy=noisy,
                               speedup=RatioCI(point=point, low=point * 0.9, high=point * 1.1,
                                               confidence=0.95, n_resamples=10),
                               roofline=None, to_dict=lambda: {"point": point})

    queue = [timing(7.0, True), timing(1.1, False)]
    calls = []

    def fake_time(backend, task, sources, shape=None, *, baseline, **kw):
        calls.append(shape)
        return queue.pop(0)

    monkeypatch.setattr(mc, "time_candidate", fake_time)
    e = VerifyMeasureEvaluator(secret="s", baselines=("eager",), shape={"N": 8}, confirm_scope=None)
    _, m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    rec = to_measurement_record(m)
    assert rec.speedup == 1.1 and not rec.findings and calls == [{"N": 8}, {"N": 8}]
    assert e.best_speedup == 1.1

    queue[:] = [timing(9.0, True), timing(9.0, True), timing(9.0, True)]
    _, m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "y"})
    rec = to_measurement_record(m)
    assert rec.speedup == 9.0 and str(rec.findings[0]).startswith("untrusted timing:")
    assert e.best_speedup == 1.1 and not queue  # two re-timings, then given up
    from kstrata.store.records import CandidateRecord
    node = Node(CandidateRecord(hash="h", sources={}, level=None, role="x", proposer="p", backend="b"))
    node.record.status = "evaluated"
    node.record.evaluation = to_evaluation_record(ok)
    node.record.measurement = rec
    assert node.correct and not node.timing_trusted and node.score == 0.0


class _AllIncorrect(FakeEvaluator):
    def evaluate(self, task, backend, srcs):
        self.calls.append({})
        return {"verdict": "incorrect", "check": "tolerance", "feedback": [{"level": "source"}]}, None


def test_a_run_from_an_incorrect_start_says_so(tmp_path):
    # newcomer nc11: a search from a kernel with a tail bug ended "none correct" without a word about the start
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), _AllIncorrect(), "greedy",
                   Budget(evaluations=3), tmp_path / "run")
    table = " ".join(_text(result_table(res.run_dir)).split())
    assert "none correct" in table
    assert "was incorrect (tolerance), and every candidate descends from it" in table
    good = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy",
                    Budget(evaluations=3), tmp_path / "good")
    assert "every candidate descends from it" not in _text(result_table(good.run_dir))
