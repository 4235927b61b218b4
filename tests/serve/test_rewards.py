"""The reward schedule: ordering of verdicts, the log-speedup bonus, cheats never paid."""

import math

import pytest

from kstrata.serve.rewards import FORMAT_ERROR, RewardConfig, shaped_reward
from kstrata.verdict import Verdict


def test_ordering_and_cheats_never_pay():
    c = RewardConfig()
    r = {v.value: shaped_reward(v, c)[0] for v in Verdict}
    assert r["rejected"] <= min(r["compile_error"], 0.0)
    assert r["compile_error"] <= r["runtime_error"] <= r["incorrect"] < r["correct"]
    assert shaped_reward(FORMAT_ERROR, c)[0] == c.format_error
    # a cheat is not paid a speedup bonus either
    assert shaped_reward("rejected", c, speedup=100.0)[0] == c.rejected


def test_speedup_bonus_is_log2_and_clipped():
    c = RewardConfig()
    assert shaped_reward("correct", c, speedup=2.0)[0] == pytest.approx(1.5)
    assert shaped_reward("correct", c, speedup=4.0)[1]["speedup_bonus"] == pytest.approx(1.0)
    assert shaped_reward("correct", c, speedup=1e9)[0] == pytest.approx(1.0 + 0.5 * c.log2_max)
    assert shaped_reward("correct", c, speedup=1e-9)[0] == pytest.approx(1.0 + 0.5 * c.log2_min)
    assert shaped_reward("correct", c, speedup=2.0, trusted=False)[0] == 1.0
    assert shaped_reward("correct", c, speedup=float("nan"))[0] == 1.0
    assert shaped_reward("incorrect", c, speedup=8.0)[0] == c.incorrect


def test_significant_only_needs_ci_excluding_one():
    c = RewardConfig(significant_only=True)
    assert shaped_reward("correct", c, speedup=1.5, ci=(0.9, 2.0))[0] == 1.0
    assert shaped_reward("correct", c, speedup=1.5, ci=(1.2, 2.0))[0] == pytest.approx(1 + 0.5 * math.log2(1.5))


@pytest.mark.parametrize("kw", [{"rejected": 0.5}, {"rejected": -0.1, "compile_error": -0.5},
                                {"log2_min": 2.0, "log2_max": 1.0}, {"correct": 0.3, "log2_min": -3.0}])
def test_bad_configs_refused(kw):
    with pytest.raises(ValueError):
        RewardConfig(**kw)


def test_unknown_verdict():
    with pytest.raises(ValueError, match="unknown verdict"):
        shaped_reward("great", RewardConfig())
