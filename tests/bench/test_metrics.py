import math

import numpy as np
import pytest

from kstrata.bench import metrics as M
from kstrata.bench.metrics import TaskOutcome as O


def _outcomes():
    return [
        O("a", level=1, category="x", compiled=True, correct=True, speedup=2.5,
          speedups={"eager": 2.5, "metaschedule": 1.2}, roofline_fraction=0.5, speedup_ci=(2.4, 2.6),
          speedups_ci={"eager": (2.4, 2.6), "metaschedule": (1.1, 1.3)}),
        O("b", level=1, category="x", compiled=True, correct=True, speedup=0.9,
          speedups={"eager": 0.9, "metaschedule": 0.7}, roofline_fraction=0.1, speedup_ci=(0.85, 0.95),
          speedups_ci={"eager": (0.85, 0.95), "metaschedule": (0.65, 0.75)}),
        O("c", level=2, category="y", compiled=True, correct=True, speedup=1.6,
          speedups={"eager": 1.6}, roofline_fraction=0.3, speedup_ci=(1.55, 1.65),
          speedups_ci={"eager": (1.55, 1.65)}),
        O("d", level=2, category="y", compiled=True, correct=False,
          verdicts={"incorrect": 2}, checks={"incorrect/tolerance": 2},
          incorrect_stages={"hidden": 1, "public": 1}),
        O("e", level=3, category="z", compiled=False, correct=False,
          verdicts={"compile_error": 1, "rejected": 1},
          checks={"compile_error/syntax": 1, "rejected/no_introspection": 1}),
        O("u", level=3, category="z", status="unsupported"),
    ]


def test_fast_p_counts_all_tasks_including_failed():
    m = M.compute_metrics(_outcomes(), n_resamples=500)
    n = 5  # unsupported left out; d and e count as not fast
    assert m["fast_0"].value == pytest.approx(3 / n)
    assert m["fast_1"].value == pytest.approx(2 / n)
    assert m["fast_1.5"].value == pytest.approx(2 / n)
    assert m["fast_2"].value == pytest.approx(1 / n)
    assert m["compile_rate"].value == pytest.approx(4 / n)
    assert m["correct_rate"].value == pytest.approx(3 / n)
    # Fast@1.0 vs the tuned baseline: only a beats metaschedule; c was not timed against it
    assert m["fast_1_tuned"].value == pytest.approx(1 / n)
    assert all(e.n == n for e in m.values())


def test_geomean_over_correct_and_median_roofline():
    m = M.compute_metrics(_outcomes(), n_resamples=500)
    assert m["geomean_speedup"].value == pytest.approx((2.5 * 0.9 * 1.6) ** (1 / 3))
    assert m["median_roofline"].value == pytest.approx(0.3)


def test_intervals_contain_the_point_and_are_reproducible():
    rng = np.random.default_rng(0)
    speedups = [float(np.exp(rng.normal(0.2, 0.5))) for _ in range(40)]
    outs = [O(f"t{i}", compiled=True, correct=bool(rng.random() < 0.7), speedup=s,
              speedup_ci=(0.95 * s, 1.05 * s)) for i, s in enumerate(speedups)]
    a = M.compute_metrics(outs, seed=1)
    for name, e in a.items():
        if e.value is None:
            continue
        assert e.low <= e.value <= e.high, name
    assert a["fast_1"].high > a["fast_1"].low  # a real spread over 40 tasks
    assert a == M.compute_metrics(outs, seed=1)


def test_undefined_metrics():
    m = M.compute_metrics([O("x", compiled=True)])
    assert m["correct_rate"].value == 0.0
    assert m["geomean_speedup"].value is None and m["fast_1_tuned"].value is None
    assert M.compute_metrics([])["fast_1"] == M.Estimate(None, None, None, 0)
    assert M.Estimate(1, 0.5, 2, 3).overlaps(M.Estimate(3, 2.5, 4, 3)) is False
    assert M.Estimate(1, 0.5, 2, 3).overlaps(M.Estimate(3, 1.5, 4, 3)) is True


def test_fast_p_of_correct_tasks_none_timed_is_not_measured():
    """Newcomer nc17: a triton-interp run (correct, never timed) showed fast_1 = 0% in the report."""
    m = M.compute_metrics([O("x", compiled=True, correct=True), O("y", compiled=True)])
    assert m["fast_0"].value == pytest.approx(0.5)
    assert all(m[f"fast_{p:g}"].value is None for p in M.FAST_P if p > 0)
    # nothing correct: nothing is fast, whatever was timed
    assert M.compute_metrics([O("y", compiled=True)])["fast_1"].value == 0.0


def test_leaderboard_breakdown_taxonomy():
    outs = _outcomes()
    for o in outs:
        o.backend, o.proposer = "pytorch", "p"
    worse = [O("a", backend="pytorch", proposer="q", compiled=True),
             O("b", backend="pytorch", proposer="q", compiled=True, correct=True, speedup=1.1,
               speedup_ci=(1.05, 1.15), spent={"evaluations": 3, "tokens_in": 100})]
    board = M.leaderboard(outs + worse, n_resamples=200)
    # sorted by fast_1: q has 1 of 2 tasks fast, p 2 of 5
    assert [r.key["proposer"] for r in board] == ["q", "p"]
    assert board[0].n_tasks == 2 and board[0].spent == {"evaluations": 3.0, "tokens_in": 100.0}
    by_level = M.breakdown(outs, "level", n_resamples=200)
    assert set(by_level) == {1, 2, 3}
    assert by_level[1][0].metrics["fast_1"].value == 0.5
    assert by_level[3][0].n_tasks == 1  # the unsupported task is not counted
    tax = M.failure_taxonomy(outs)
    assert tax["verdicts"] == {"incorrect": 2, "compile_error": 1, "rejected": 1}
    assert tax["checks"]["rejected/no_introspection"] == 1
    assert tax["incorrect_stages"] == {"hidden": 1, "public": 1}
    assert M.metric_names()[:2] == ["compile_rate", "correct_rate"]
    assert all(name in M.LABELS for name in M.metric_names())
    assert math.isclose(M.compute_metrics(worse)["geomean_speedup"].value, 1.1)
