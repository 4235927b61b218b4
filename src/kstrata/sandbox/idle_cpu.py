"""CPU that a candidate's sandbox uses while the judge works between its requests.

A candidate process answers a request and then waits for the next one; meanwhile the judge
draws inputs and runs the reference and the float64 oracle on the same CPUs. Nothing froze
the sandbox then (:meth:`kstrata.sandbox.client.CandidateProcess.freeze` holds it during a
baseline's timed calls only): a candidate that forked 16 busy processes at import, with
honest calls, kept a ``kstrata eval relu --scope small`` verification (24 s alone) running
for more than 10 minutes on this project's 2-CPU machine, and every other process of the
machine with it (red team rt74, tests/sandbox/cases/rt74_spin_while_judged). Its time limit
counts its own requests only; the whole verification's wall limit (3 x the limit + 300 s)
would have ended it as the judge's timeout, the task's reference named.

:class:`IdleCpu` reads the CPU-time clocks of the sandbox's processes (and what their
reapers reaped) when each reply arrives and when the next request is sent, and sums both
over the gaps: once the gaps add up to :data:`WINDOW_S` of wall time, a sandbox that used
more than :data:`SHARE` of a CPU over them (and at least :data:`MIN_MS`) is ended. An
honest candidate uses about none there (its process blocks in a read; the pools' threads
sleep: ``OMP_WAIT_POLICY=PASSIVE``, ``TVM_THREAD_POOL_SPIN_COUNT=0``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: Wall time of the judge's gaps (s) summed before the sandbox's use over them is judged.
WINDOW_S = 2.0
#: Most CPUs the sandbox may use on average over the gaps.
SHARE = 0.25
#: Least CPU ms over a window that ends a candidate (below: timer and reaping noise).
MIN_MS = 500.0
#: The sandbox's process list is read again at most this often (s): 0, at every reply and request, read
#: from the sandbox's own ``/proc/PID/task/TID/children`` files (:func:`kstrata.sandbox.client.descendants`,
#: ~0.3 ms). It was 1 s (a walk of the host's whole ``/proc``, milliseconds): a process forked in a call,
#: spinning through the judge's gap and reaped in the next call was on neither list, and its CPU went into
#: its reaper's clock inside a request, so a sandbox that kept a CPU busy over every gap read 0.1 ms
#: (red team rt77, tests/sandbox/cases/rt77_fresh_spinner_per_gap).
REFRESH_S = 0.0


class IdleCpu:
    """Call :meth:`replied` when a reply has arrived and :meth:`sending` before the next
    request; :meth:`sending` returns why the candidate must be ended, or None.

    Parameters
    ----------
    pids:
        The host PIDs of the sandbox's processes that may run candidate code
        (:meth:`kstrata.sandbox.client.CandidateProcess._own_processes`).
    reaper:
        The host PID of the sandbox's zygote (0 while unknown): what ended there
        moved its CPU time into the zygote's reaped-children times.
    """

    def __init__(self, pids: Callable[[], list[int]], reaper: Callable[[], int]):
        self._pids, self._reaper = pids, reaper
        self._listed: list[int] = []
        self._listed_at = -float("inf")
        self._mark: tuple[float, dict[int, float]] | None = None
        self.gap_s = 0.0
        self.gap_ms = 0.0
        #: CPU ms the sandbox used over every gap so far (never reset): the timing reads it around each
        #: timed call (:attr:`kstrata.measure.remote.RemoteCandidate.idle_gap_ms`, work left running)
        self.waited_ms = 0.0

    def _read(self, early: bool = False) -> dict[int, float]:
        """CPU ms per process now (each with what it reaped), from the process list of at
        most :data:`REFRESH_S` ago. ``early``: the processes already listed are read first,
        then the list is refreshed and only processes new to it are read (the list's walk,
        ~0.3 ms, is then after the gap's start: work left running when a reply was sent
        does not run unseen while the sandbox is listed)."""
        from kstrata.measure.remote import sandbox_cpu_ms

        out: dict[int, float] = {}
        if early:
            z = self._reaper()
            out = {pid: sandbox_cpu_ms([pid]) for pid in ([z] if z else []) + self._listed}
        now = time.monotonic()
        if now - self._listed_at >= REFRESH_S:
            self._listed, self._listed_at = list(self._pids()), now
        z = self._reaper()  # (known once the sandbox has been listed)
        for pid in ([z] if z else []) + self._listed:
            if pid not in out:
                out[pid] = sandbox_cpu_ms([pid])
        return out

    def replied(self) -> None:
        self._mark = (time.monotonic(), self._read(early=True))

    def sending(self) -> str | None:
        mark, self._mark = self._mark, None
        if mark is None:
            return None
        t0, before = mark
        after = self._read()
        self.gap_s += time.monotonic() - t0
        # a process on both lists by its use since the reply; one on the second only was born in the gap
        # (both lists are fresh, REFRESH_S): all its CPU (with what it reaped) is the gap's
        used = sum(max(0.0, after[p] - before[p]) if p in before else after[p] for p in after)
        self.gap_ms += used
        self.waited_ms += used
        if self.gap_s < WINDOW_S:
            return None
        wall, used = self.gap_s, self.gap_ms
        self.gap_s = self.gap_ms = 0.0
        if used <= max(MIN_MS, SHARE * wall * 1e3):
            return None
        return (f"the candidate's processes used {used / 1e3:.2g} s of CPU in {wall:.2g} s {BUSY_MARK} "
                "(inputs, reference, oracle), where a candidate waits for its next "
                "request: a thread or process left running takes the CPUs from the judge (its process tree "
                "was killed)")


#: The words every 'busy' death's message holds (:meth:`IdleCpu.sending`): a timing that ended so reaches the
#: caller as text through the judge's worker pool (:func:`timing_rejection`).
BUSY_MARK = "while the judge worked between its requests"


def timing_rejection(error: object) -> tuple[str, str] | None:
    """``(check, message)`` where a timing's error is the candidate's fault and makes it ``rejected``, as
    the verification would have: a timed call's output differed from the oracle (``timed_output``), or its
    sandbox kept the CPUs busy while the judge worked (``no_threads_left``, as
    :func:`kstrata.verify.runner.died` says of the same death). None for any other error (the timing
    failed; the verdict stands). ``error`` is the exception or its text ("exception: CandidateDied: ...").
    Red-team case rt49_helpers_continue_each_other read correct, its timing's error aside, once the sandbox
    was ended for being busy (76e5a94) before the timing's own SIGCONT finding could reject it."""
    text = str(error)
    if "TimedOutputMismatch" in text:
        return "timed_output", text.split("TimedOutputMismatch: ", 1)[-1]
    if "CandidateDied" in text and BUSY_MARK in text:
        return "no_threads_left", text.split("CandidateDied: ", 1)[-1]
    return None
