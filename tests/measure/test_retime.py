"""Re-timing a doubtful timing inside the timing call (kstrata.measure.retime)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kstrata.backends.pytorch import PyTorchBackend
from kstrata.measure import candidate as mc
from kstrata.measure.remote import TimedOutputMismatch
from kstrata.measure.retime import doubtful, retimed
from kstrata.measure.stats import RatioCI
from kstrata.measure.timing import TimingConfig
from kstrata.tasks.loader import resolve_task


@dataclass
class FakeTiming:
    point: float
    noisy: bool
    suspicious: list = field(default_factory=list)
    retimes: list = field(default_factory=list)

    @property
    def speedup(self):
        return RatioCI(point=self.point, low=self.point, high=self.point, confidence=0.95, n_resamples=1)

    def to_dict(self):
        return {"point": self.point, "noisy": self.noisy, "retimes": list(self.retimes)}


def _again(queue, calls):
    def again(k):
        calls.append(k)
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item
    return again


def test_a_clean_or_slow_timing_is_not_retimed():
    calls = []
    clean = FakeTiming(3.0, noisy=False)
    assert retimed(clean, _again([], calls), 2, 1.0) is clean
    slow = FakeTiming(0.5, noisy=True)  # doubtful, but reads below the bar: not a would-be best
    assert retimed(slow, _again([], calls), 2, 1.0) is slow
    assert retimed(FakeTiming(3.0, noisy=True), _again([], calls), 2, None).retimes == []
    assert calls == [] and not slow.retimes


def test_the_first_clean_retiming_replaces_the_doubtful_one():
    calls = []
    first = FakeTiming(3.0, noisy=True)
    second = FakeTiming(2.9, noisy=True, suspicious=["under the roofline floor"])
    third = FakeTiming(2.5, noisy=False)
    got = retimed(first, _again([second, third], calls), 2, 1.0)
    assert got is third and calls == [1, 2]
    assert [d["point"] for d in got.retimes] == [3.0, 2.9] and "retimes" not in got.retimes[0]
    assert doubtful(second) and not doubtful(third)


def test_retimings_that_stay_doubtful_keep_the_first_and_record_the_rest():
    calls = []
    first = FakeTiming(3.0, noisy=True)
    got = retimed(first, _again([FakeTiming(3.1, True), FakeTiming(3.2, True)], calls), 2, 1.0)
    assert got is first and calls == [1, 2] and [d["point"] for d in got.retimes] == [3.1, 3.2]


def test_a_failed_retiming_stops_but_a_timed_output_mismatch_is_raised():
    first = FakeTiming(3.0, noisy=True)
    calls = []
    got = retimed(first, _again([RuntimeError("candidate process died"), FakeTiming(3.0, False)], calls), 2, 1.0)
    assert got is first and calls == [1] and "candidate process died" in got.retimes[0]["error"]
    with pytest.raises(TimedOutputMismatch):
        retimed(FakeTiming(3.0, noisy=True), _again([TimedOutputMismatch("wrong", {"call": 3})], []), 2, 1.0)


def test_time_candidate_retimes_in_the_processes_it_built(monkeypatch):
    """Every re-timing reuses the candidate and baseline processes (built once)
    and checks its own timed calls (first and last at least)."""
    built = []
    real = mc._remote

    def counting(task, b, *a, **k):
        built.append(b.name)
        return real(task, b, *a, **k)

    monkeypatch.setattr(mc, "_remote", counting)
    task = resolve_task("rmsnorm")
    always_noisy = TimingConfig(budget_ms=20, min_reps=6, max_reps=20, warmup_ms=2, flush_bytes=1 << 20,
                                max_remeasure=0, rel_iqr_threshold=-1.0)
    m = mc.time_candidate("pytorch", task, PyTorchBackend().initial_sources(task), {"B": 16, "D": 256},
                          config=always_noisy, with_roofline=False, retimes=2, retime_above=-1.0)
    assert built == ["pytorch", "pytorch"]  # candidate and eager baseline, once each
    assert m.noisy and len(m.retimes) == 2
    for r in [m.to_dict()] + m.retimes:
        assert r["reps"] >= 6 and r["flush"]["timed_calls_checked"] >= 2
    built.clear()
    m = mc.time_candidate("pytorch", task, PyTorchBackend().initial_sources(task), {"B": 16, "D": 256},
                          config=always_noisy, with_roofline=False)
    assert m.retimes == [] and len(built) == 2  # not asked: no re-timing
