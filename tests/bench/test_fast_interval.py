"""fast_p counts a task only on its speedup interval's lower bound (issue #17
item 6; case 03_tie_counted_as_faster). The case end to end, its own check
script included, is tests/verify/test_cases_verify.py's case 03."""

from __future__ import annotations

import pytest

from kstrata.bench import metrics as M
from kstrata.bench.metrics import TaskOutcome


def test_tie_is_not_fast_whatever_the_point_estimate():
    tie = TaskOutcome("gelu", correct=True, speedup=1.04, speedup_ci=(0.97, 1.09))
    win = TaskOutcome("gelu", correct=True, speedup=1.2, speedup_ci=(1.1, 1.3))
    bare = TaskOutcome("gelu", correct=True, speedup=1.5)  # no interval: not demonstrated
    assert not tie.fast(1.0) and win.fast(1.0) and not bare.fast(1.0)
    assert tie.fast(0.9) and not win.fast(1.1)  # strictly above p
    weak = TaskOutcome("x", correct=True, speedup=3.0, speedup_ci=(2.9, 3.1), excluded="weak_match: zeros")
    assert not weak.fast(1.0)
    m = M.compute_metrics([tie, win, bare, weak], n_resamples=200)
    assert m["fast_1"].value == pytest.approx(1 / 4)
    # the excluded speedup is left out of the geomean; the tie and the bare one are in it
    assert m["geomean_speedup"].value == pytest.approx((1.04 * 1.2 * 1.5) ** (1 / 3))
    assert m["correct_rate"].value == 1.0
    assert M.format_speedup(1.04, (0.97, 1.09)) == "1.04x [0.97, 1.09]"
    tuned = TaskOutcome("y", correct=True, speedup=2.0, speedup_ci=(1.9, 2.1),
                        speedups={"metaschedule": 1.05}, speedups_ci={"metaschedule": (0.98, 1.12)})
    assert not tuned.fast(1.0, "metaschedule") and tuned.fast(1.0)
