"""GPU timed calls take the CUDA-event time the candidate's process reports,
held against the judge's wall clock around the same request (remote.clock_note).
The fake process below stands in for a GPU candidate process on this CPU."""

from __future__ import annotations

import pytest

from kstrata.measure.remote import RemoteCandidate, RemoteTimer, TimedOutputMismatch, clock_note


class FakeProc:
    """Answers ``run`` with a fixed CUDA-event time (or none) after sleeping ``wall_s``."""

    def __init__(self, device_ms: float | None, wall_s: float = 0.0):
        self.device_ms, self.wall_s = device_ms, wall_s

    def ok(self, h, bufs=None):
        import time

        if h["op"] == "run":
            time.sleep(self.wall_s)
            return ({"ok": True} if self.device_ms is None else {"ok": True, "device_ms": self.device_ms}), []
        return {"ok": True}, []


def _side(pairs):
    rc = RemoteCandidate(FakeProc(None))
    rc.clock = list(pairs)
    return rc


def test_a_gpu_timed_call_is_its_event_time_and_keeps_the_wall_clock_beside_it():
    rc = RemoteCandidate(FakeProc(0.04, wall_s=0.002))
    rc.overhead_ms = 0.5
    timer = RemoteTimer(lambda t: 0.0, "cuda:0")
    ms = timer(rc.thunks(1)[0])
    assert ms == pytest.approx(0.04)
    (wall, dev), = rc.clock
    assert dev == pytest.approx(0.04) and wall >= 2.0
    # on the CPU the judge's clock minus the round trip is the time, as before
    cpu = RemoteCandidate(FakeProc(None, wall_s=0.002))
    assert RemoteTimer(lambda t: 0.0, "cpu")(cpu.thunks(1)[0]) >= 1.9 and not cpu.clock


def test_a_gpu_call_without_its_event_time_is_rejected():
    rc = RemoteCandidate(FakeProc(None))
    with pytest.raises(TimedOutputMismatch):
        RemoteTimer(lambda t: 0.0, "cuda:0")(rc.thunks(1)[0])


def test_event_times_that_disagree_with_the_judges_clock_are_marked():
    base = _side([(0.30, 0.10)] * 20)                     # gap 0.20 ms
    assert clock_note(_side([(0.31, 0.10)] * 20), base) is None
    hidden = clock_note(_side([(0.45, 0.02)] * 20), base)  # 0.23 ms of every call hidden from the events
    assert hidden and hidden.startswith("clock disagreement") and "0.43 ms" in hidden
    longer = clock_note(_side([(0.05, 0.10)] + [(0.30, 0.10)] * 19))
    assert longer and "longer than the judge's wall clock" in longer
    assert clock_note(_side([])) is None
