"""KernelEnv: rewards for honest, wrong and cheating candidates; batched rollouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from serve_candidates import CACHED_OUTPUT, CALLS_REFERENCE, DOES_NOT_BUILD, HONEST_RELU, WRONG_RELU
from kstrata.serve.env import KernelEnv
from kstrata.serve.rewards import RewardConfig
from kstrata.serve.service import ServeError, quick_timing

TINY = str(Path(__file__).parent / "tasks" / "tiny_relu.py")


@pytest.mark.slow
def test_suite_relu_hack_rejected_honest_paid():
    """On the suite task ``relu`` (hidden sweep up to 33 x 65537): a candidate
    that calls the reference Model is rejected and gets no positive reward; an
    honest one is paid."""
    with KernelEnv("relu", "pytorch", time_candidates=False, workers=2) as env:
        obs = env.reset()
        assert "65537" not in obs.prompt and "class Model" in obs.prompt
        hack, honest = env.evaluate_many([CALLS_REFERENCE, HONEST_RELU])
    assert hack.verdict == "rejected" and hack.reward <= 0
    assert hack.reward <= RewardConfig().compile_error
    assert honest.verdict == "correct" and honest.reward > 0


def test_evaluate_many_in_order_and_best_tracked():
    batch = [HONEST_RELU, DOES_NOT_BUILD, WRONG_RELU, CALLS_REFERENCE, "", HONEST_RELU.replace(
        "torch.clamp_min(x, 0.0)", "torch.where(x > 0, x, torch.zeros_like(x))")]
    with KernelEnv(TINY, "pytorch", workers=2, timing=quick_timing(20), max_steps=6) as env:
        obs = env.reset()
        assert obs.best_source and "ModelNew" in obs.best_source["source"]
        results = env.evaluate_many(batch)
        assert [r.verdict for r in results] == [
            "correct", "compile_error", "incorrect", "rejected", "format_error", "correct"]
        assert results[-1].done and not results[0].done
        cfg = RewardConfig()
        assert results[3].reward == cfg.rejected and results[1].reward == cfg.compile_error
        assert results[2].reward == cfg.incorrect and results[0].reward > cfg.incorrect
        assert results[0].info["evaluation"]["timing"]["speedup"] > 0
        assert "empty" in results[4].info["error"]
        obs = env.observation()
        assert obs.best_source["source"] in (batch[0], batch[5])
        assert obs.feedback is not None


def test_step_and_reset():
    with KernelEnv(TINY, "pytorch", workers=1, time_candidates=False) as env:
        env.reset()
        r = env.step(CALLS_REFERENCE)
        assert r.verdict == "rejected" and r.reward < 0
        assert "rejected" in env.observation().prompt
        r = env.step(HONEST_RELU)
        assert r.verdict == "correct" and r.reward == RewardConfig().correct
        assert env.observation().best_source == {"source": HONEST_RELU}
        assert env.reset().feedback is None


def test_cached_output_is_never_paid_as_correct():
    with KernelEnv(TINY, "pytorch", workers=1, time_candidates=False) as env:
        r = env.step(CACHED_OUTPUT)
    assert r.verdict != "correct" and r.reward < RewardConfig().correct


def test_bad_task_or_backend():
    with pytest.raises(ServeError, match="unknown task"):
        KernelEnv("no_such_task", "pytorch")
    with pytest.raises(ServeError, match="unknown backend"):
        KernelEnv(TINY, "nope")
