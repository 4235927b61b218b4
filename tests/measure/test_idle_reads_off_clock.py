"""The sandbox's idle-CPU reads (kstrata.sandbox.idle_cpu, made at each request of an untrusted process)
stay off the judge's clock around a timed call and its calibration (remote.idle_reads_off_clock).

On the H100 (2026-12-06) they sat inside it: an honest Triton cross_entropy's wall-minus-event gap read
0.86 ms against eager's 0.52 ms (eager's trusted process makes none) and the final round marked its timing
suspicious (clock disagreement). The stand-in process below makes each read cost READ_S of wall time."""

from __future__ import annotations

import time

import pytest

from kstrata.measure.remote import RemoteCandidate, RemoteTimer, clock_note
from kstrata.sandbox.client import CandidateDied

READ_S = 0.004


class WatchedProc:
    """A GPU candidate process whose requests check and mark its idle CPU as CandidateProcess.request
    does (unless paused), each read taking READ_S."""

    def __init__(self, device_ms: float = 0.05, busy: bool = False):
        self.device_ms, self.busy = device_ms, busy
        self.idle_paused = False
        self.events: list[str] = []

    def idle_check(self) -> None:
        time.sleep(READ_S)
        self.events.append("check")
        if self.busy:
            raise CandidateDied("busy", "kept the CPUs busy while the judge worked")

    def idle_mark(self) -> None:
        time.sleep(READ_S)
        self.events.append("mark")

    def ok(self, h, bufs=None):
        if not self.idle_paused:
            self.idle_check()
        self.events.append(f"{h['op']} {h.get('i', '')}".strip() + (" (paused)" if self.idle_paused else ""))
        if h["op"] == "run" and h["i"] >= 0:
            time.sleep(0.0002)  # the call itself: longer than its event time, as a real round trip is
        reply = {"ok": True, "device_ms": self.device_ms} if h["op"] == "run" and h["i"] >= 0 else {"ok": True}
        if not self.idle_paused:
            self.idle_mark()
        return reply, []


def test_a_timed_calls_idle_reads_are_made_around_the_clock_not_inside_it():
    rc = RemoteCandidate(WatchedProc())
    RemoteTimer(lambda t: 0.0, "cuda:0")(rc.thunks(1)[0])
    # the flush before the call is a request of its own, off the clock as before
    assert rc.proc.events[-3:] == ["check", "run 0 (paused)", "mark"]
    (wall, dev), = rc.clock
    assert dev == pytest.approx(0.05)
    assert wall < 2 * READ_S * 1e3  # both reads inside would put 8 ms on the clock; a sleep is never shorter
    assert not rc.proc.idle_paused
    # a baseline process making no such reads has the same gap: nothing to mark suspicious
    base = RemoteCandidate(WatchedProc())
    base.clock = [(wall, dev)] * 20
    rc.clock = rc.clock * 20
    assert clock_note(rc, base) is None


def test_the_calibrated_round_trip_leaves_them_out_too():
    rc = RemoteCandidate(WatchedProc())
    assert rc.calibrate(5) < 2 * READ_S * 1e3
    assert rc.proc.events.count("check") == 5 and all("paused" in e for e in rc.proc.events if e.startswith("run"))


def test_a_busy_sandbox_found_before_a_timed_call_still_ends_it():
    rc = RemoteCandidate(WatchedProc(busy=True))
    with pytest.raises(CandidateDied) as e:
        RemoteTimer(lambda t: 0.0, "cuda:0")(rc.thunks(1)[0])
    assert e.value.cause == "busy" and not any(ev.startswith("run") for ev in rc.proc.events)
