"""Red team rt77: since 7f66959 the sandbox's idle-CPU check and mark (kstrata.sandbox.idle_cpu, /proc
reads: ~0.3 ms, milliseconds when the process list is walked again) are made just before and just after the
judge's clock around a timed call, with the candidate's processes running (thawed). The candidate's CPU
clocks were read outside them, so what its helpers did while the judge made those reads (off the clock)
counted as the timed call's own CPU, not as a gap's: deferred_work_note (work left running after a call, or done
ahead of it) never saw it. Now those clocks are read inside, next to the judge's clock. The stand-in below
is a sandbox whose helper uses HELPER_MS of CPU during each idle read and none anywhere else.
Case: tests/sandbox/cases/rt77_work_in_idle_reads.
"""

from __future__ import annotations

import pytest

from kstrata.measure.remote import RemoteCandidate, RemoteTimer, deferred_work_note

HELPER_MS = 5.0


class HelperDuringReads:
    """A candidate process (CPU stand-in) whose helper works only while the judge checks or marks its idle
    CPU; its own calls use 1 ms of CPU."""

    def __init__(self, helper: bool = True):
        self.idle_paused = False
        self.helper = helper
        self.cpu = 0.0

    def idle_check(self) -> None:
        self.cpu += HELPER_MS if self.helper else 0.0

    def idle_mark(self) -> None:
        self.cpu += HELPER_MS if self.helper else 0.0

    def ok(self, h, bufs=None):
        if not self.idle_paused:  # as CandidateProcess.request does
            self.idle_check()
        if h["op"] == "run" and h.get("i", -1) >= 0:
            self.cpu += 1.0
        if not self.idle_paused:
            self.idle_mark()
        return {"ok": True}, []


def _timed(helper: bool, calls: int = 12) -> RemoteCandidate:
    proc = HelperDuringReads(helper)
    rc = RemoteCandidate(proc)
    rc.cpu_ms = lambda: proc.cpu  # read from outside, as the sandbox's CPU-time clocks are
    timer = RemoteTimer(lambda t: 0.0, "cpu")
    for thunk in rc.thunks(calls):
        timer(thunk)
    return rc


def test_helper_work_while_the_judge_reads_idle_cpu_is_gap_cpu_not_the_calls():
    cheat, honest = _timed(True), _timed(False)
    assert len(cheat.gap_cpu_ms) >= 3
    # each gap holds at least the mark after one call and the check before the next (and the flush's own)
    assert min(cheat.gap_cpu_ms) >= 2 * HELPER_MS, cheat.gap_cpu_ms
    assert max(honest.gap_cpu_ms) == pytest.approx(0.0)
    honest.gap_cpu_ms = [0.0, 0.01, 0.0, 0.02] * 3  # the baseline's honest gaps (noise)
    assert deferred_work_note(cheat, honest, timed_ms=12.0) is not None


class SlowReads(HelperDuringReads):
    """Idle reads that take READ_S of wall time each (a walk of the sandbox's tree on a loaded machine)."""

    READ_S = 0.004

    def idle_check(self) -> None:
        import time

        time.sleep(self.READ_S)

    def idle_mark(self) -> None:
        import time

        time.sleep(self.READ_S)


def test_the_flush_before_a_timed_call_is_timed_without_the_idle_reads():
    """untimed_work_note compares the candidate's flush round trip with the trusted baseline's, which makes
    no idle reads: an honest relu's read 3.58 ms against 2.37 ms on this machine once each read listed the
    sandbox (55576c9)."""
    proc = SlowReads(helper=False)
    rc = RemoteCandidate(proc)
    timer = RemoteTimer(lambda t: 0.0, "cpu")
    for thunk in rc.thunks(5):
        timer(thunk)
    assert rc.flush_ms and max(rc.flush_ms) < SlowReads.READ_S * 1e3, rc.flush_ms


def test_the_output_fetch_is_timed_without_the_idle_reads():
    """fetch_work_note compares the candidate's output fetch with the trusted baseline's: an honest relu's
    read 5.07 ms against 3.89 ms here ('deferred work') with the reads inside it."""
    rc = RemoteCandidate(SlowReads(helper=False), check=lambda *a: None)
    timer = RemoteTimer(lambda t: 0.0, "cpu")
    for thunk in rc.thunks(12):
        timer(thunk)
    assert rc.fetch_ms and max(rc.fetch_ms) < SlowReads.READ_S * 1e3, rc.fetch_ms
