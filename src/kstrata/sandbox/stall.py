"""Ending a candidate that makes no progress, long before its time limit.

A candidate that sleeps, blocks forever on a lock or a pipe, or stops itself
(``os.kill(os.getpid(), SIGSTOP)``) used to hold the judge for the whole
verification limit (600 s by default), one evaluation's worth of the search
budget per such candidate. While the judge waits for a reply,
:class:`StallWatch` reads the CPU time of every process of the candidate's
sandbox (its children's and reaped children's included) and the set of those
processes, about once a second:

* every process stopped (``SIGSTOP``/``SIGTSTP``, traced) for
  :data:`STOPPED_S` s: ended at once, it cannot answer;
* no process started or ended, and at most :data:`PROGRESS_SHARE` of one CPU
  used, for :func:`stall_limit` s (``KSTRATA_CANDIDATE_STALL_S``, default
  :data:`DEFAULT_STALL_S`): ended as stalled (a loop of ``time.sleep(1)`` uses a
  clock tick every few minutes; it is asleep all the same).

A candidate that computes, compiles (its compiler is a process of its tree), or
waits on a GPU (CUDA's default synchronization spins or yields, which uses CPU
time) uses far more than that, and only the time limit ends it. A machine so
loaded that a running process gets under 1% of a CPU for :data:`DEFAULT_STALL_S`
seconds is not one to time kernels on.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

#: the environment variable that sets the stall limit (seconds; 0 turns the watch off)
STALL_ENV = "KSTRATA_CANDIDATE_STALL_S"
#: seconds without progress (see :data:`PROGRESS_SHARE`) after which a candidate is ended
DEFAULT_STALL_S = 120.0
#: seconds every process of the candidate may stay stopped
STOPPED_S = 5.0
#: how often the judge looks (seconds)
POLL_S = 1.0
#: a candidate's processes that used at most this share of one CPU since their last
#: progress (a process started or ended, or more CPU time than this) make none
PROGRESS_SHARE = 0.01


def stall_limit() -> float:
    """The stall limit in seconds from ``KSTRATA_CANDIDATE_STALL_S`` (a number >= 0;
    0 turns the watch off), else :data:`DEFAULT_STALL_S` (also for a value that is
    not a number)."""
    raw = os.environ.get(STALL_ENV, "").strip()
    try:
        v = float(raw)
    except ValueError:
        return DEFAULT_STALL_S
    return v if math.isfinite(v) and v >= 0 else DEFAULT_STALL_S


class StallWatch:
    """Progress of a candidate's processes between a request and its reply.

    Parameters
    ----------
    pids:
        Returns the host PIDs of the candidate's processes now (the candidate and
        everything it forked; not the sandbox's own processes).
    limit_s:
        :func:`stall_limit`; 0 never reports a stall (stopped processes still are).
    """

    def __init__(self, pids: Callable[[], list[int]], limit_s: float):
        self.pids = pids
        self.limit_s = limit_s
        self.seen: tuple | None = None
        self.since = 0.0
        self.stopped_since: float | None = None

    def check(self, now: float) -> str | None:
        """Why the candidate should be ended at ``now`` (monotonic seconds), or
        ``None`` while it makes progress (or nothing can be read)."""
        import psutil

        pids = self.pids()
        total, stopped, alive = 0.0, 0, 0
        for pid in pids:
            try:
                p = psutil.Process(pid)
                with p.oneshot():
                    status = p.status()
                    if status in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                        continue
                    t = p.cpu_times()
            except psutil.Error:
                continue
            alive += 1
            total += t.user + t.system + getattr(t, "children_user", 0.0) + getattr(t, "children_system", 0.0)
            stopped += status in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)
        if not alive:
            return None
        # progress: a process came or went, or the tree used more than PROGRESS_SHARE of one CPU since the
        # last progress. Not "any tick": a loop of time.sleep(1) gains a clock tick every few minutes and
        # was never ended (newcomer nc11: 595 s, at the time limit)
        procs = frozenset(pids)
        if self.seen is None or procs != self.seen[1] or \
                total - self.seen[0] > PROGRESS_SHARE * max(now - self.since, POLL_S):
            self.seen, self.since = (total, procs), now
        if stopped == alive:
            self.stopped_since = now if self.stopped_since is None else self.stopped_since
            if now - self.stopped_since >= min(STOPPED_S, self.limit_s or STOPPED_S):
                return (f"every process of the candidate ({alive}) was stopped (SIGSTOP or a tracer) for "
                        f"{now - self.stopped_since:.0f} s: it cannot answer; its process tree was killed")
        else:
            self.stopped_since = None
        if self.limit_s and now - self.since >= self.limit_s:
            return (f"the candidate used almost no CPU time (under {PROGRESS_SHARE:.0%} of one CPU) for "
                    f"{now - self.since:.0f} s while kstrata waited for its "
                    f"answer (asleep, or blocked on a lock, pipe or signal: a hanging candidate); its process "
                    f"tree was killed before the time limit ({STALL_ENV} sets this limit, 0 turns it off)")
        return None
