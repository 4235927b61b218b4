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

    def fake_time(backend, task, sources, *, baseline, **kw):
        if baseline == "metaschedule":
            raise RuntimeError("no tvm")
        return timed

    monkeypatch.setattr(mc, "time_candidate", fake_time)
    e = VerifyMeasureEvaluator(secret="s", baselines=("eager", "metaschedule"))
    got_ev, got_m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    rec = to_measurement_record(got_m)
    assert got_ev is ok and rec.speedup == 3.0 and rec.roofline_fraction == 0.7
    assert rec.bound == "memory" and got_m["raw"]["metaschedule"] == {"error": "RuntimeError: no tvm"}
    e = VerifyMeasureEvaluator(secret="s", baselines=("metaschedule",))
    bad, none = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    assert bad.verdict is Verdict.RUNTIME_ERROR and bad.check == "timing" and none is None
