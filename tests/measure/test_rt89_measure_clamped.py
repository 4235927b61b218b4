"""Timed calls that read the timer's clamp (no longer than the calibrated round trip to their process) make the
timing suspicious, and the prompt says why. Queue round rt89 (rmsnorm on tvm-llvm, 2 CPUs at load 9): 11 of the
candidate's 30 calls read 1e-06 ms and the prompt showed "speedup vs eager: 5.13x (95% interval 1.15-9.23e+06)"
and "time: 1.197 ms", with nothing saying that a third of the calls were not readings."""

from __future__ import annotations

from types import SimpleNamespace

from kstrata.agents.prompt import Feedback
from kstrata.measure.remote import CLAMP_MS
from kstrata.measure.timing import clamped_note
from kstrata.search.evaluators import _untrusted

# the live run's samples (ms), rounded: candidate and baseline of rmsnorm d14f2164
CAND = [15.05, 4.408, 18.0, CLAMP_MS, 1.005, 38.73, 11.94, 9.25, 2.375, CLAMP_MS, 0.0779, 4.793, CLAMP_MS, 5.95,
        CLAMP_MS, 1.39, CLAMP_MS, 12.7, 10.71, CLAMP_MS, 3.928, CLAMP_MS, CLAMP_MS, CLAMP_MS, 8.841, CLAMP_MS, 0.175,
        CLAMP_MS, 5.008, 0.5036]
BASE = [9.543, 9.264, 20.72, 7.095, 1.439, 1.284, CLAMP_MS, 4.183, CLAMP_MS, 15.05] + [9.0] * 20


def test_calls_read_as_zero_are_counted_and_said():
    note = clamped_note(CAND, BASE)
    assert note.startswith("11 of the candidate's 30 timed calls took no longer than the calibrated round trip"), note
    assert "baseline" not in note.split(" took ")[0], note  # 2 of 30 is under the 10% share
    assert "not readings of the kernel" in note, note
    assert clamped_note([1.0] * 30, [2.0] * 30) == ""
    assert "3 of the baseline's 20" in clamped_note([1.0] * 20, [CLAMP_MS] * 3 + [2.0] * 17)


def test_the_prompt_shows_it_as_why_the_timing_is_not_trusted():
    finding = _untrusted(SimpleNamespace(suspicious=[clamped_note(CAND, BASE)]), 2)
    fb = Feedback.from_json({"verdict": "correct", "measurement": {
        "median_ms": 1.197, "speedups": [{"baseline": "eager", "value": 5.13, "ci_low": 1.15, "ci_high": 9.2e6}],
        "findings": [finding]}})
    assert fb.distrust and "11 of the candidate's 30 timed calls" in fb.distrust[0], fb
    assert "read as 0 ms" in fb.distrust[0], fb.distrust
