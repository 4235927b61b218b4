import numpy as np
import pytest

from kstrata.measure.stats import paired_ratio_ci, summarize


def test_summarize_known_values():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.median == 3.0 and s.min == 1.0 and s.max == 100.0
    assert s.q1 == 2.0 and s.q3 == 4.0 and s.iqr == 2.0
    assert s.mad == 1.0
    assert s.rel_iqr == pytest.approx(2 / 3)


def test_summarize_empty_raises():
    with pytest.raises(ValueError):
        summarize([])


@pytest.mark.parametrize("ratio", [1.0, 1.5, 2.0, 0.8])
def test_bootstrap_ci_covers_known_ratio(ratio):
    rng = np.random.default_rng(1)
    cand = rng.lognormal(mean=0.0, sigma=0.05, size=200) + 1.0
    # baseline_i = ratio * candidate_i with independent multiplicative noise
    base = ratio * cand * rng.lognormal(mean=0.0, sigma=0.03, size=200)
    ci = paired_ratio_ci(base, cand, n_resamples=2000, seed=3)
    assert ci.low <= ratio <= ci.high
    assert ci.high - ci.low < 0.05 * ratio
    assert ci.n_resamples == 2000 and ci.confidence == 0.95


def test_bootstrap_ci_coverage_rate():
    """The 95% interval covers the true median ratio in most of 100 trials."""
    rng = np.random.default_rng(7)
    covered = 0
    for trial in range(100):
        cand = 1 + rng.random(60)
        base = 1.3 * cand * rng.lognormal(0, 0.05, 60)  # median ratio 1.3
        ci = paired_ratio_ci(base, cand, n_resamples=500, seed=trial)
        covered += ci.low <= 1.3 <= ci.high
    assert covered >= 85


def test_bootstrap_is_reproducible_and_validates():
    a, b = [1.0, 2.0, 3.0], [1.0, 1.0, 1.5]
    assert paired_ratio_ci(a, b, seed=5) == paired_ratio_ci(a, b, seed=5)
    with pytest.raises(ValueError):
        paired_ratio_ci([1.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        paired_ratio_ci([0.0], [1.0])


def test_placement_term_makes_an_a_a_offset_a_tie():
    """Two processes running the same code read a few percent apart with a tight
    bootstrap interval (case 03: 1.07x [1.03, 1.12] on the H200); with the
    process-placement term folded in, the interval holds 1.0, while a real 2x
    speedup stays clearly above it."""
    from kstrata.measure.stats import PROCESS_PLACEMENT, paired_ratio_ci, with_placement

    rng = np.random.default_rng(0)
    base = 1.0 + 0.01 * rng.standard_normal(200)
    aa = paired_ratio_ci(base * 1.07, base)
    assert aa.low > 1.0                              # the bootstrap alone calls it faster
    wide = with_placement(aa)
    assert wide.low <= 1.0 <= wide.high and wide.point == aa.point and wide.placement == PROCESS_PLACEMENT
    real = with_placement(paired_ratio_ci(base * 2.0, base))
    assert real.low > 1.5
    with pytest.raises(ValueError):
        with_placement(aa, -0.1)
