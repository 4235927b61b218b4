"""Whether other processes competed for the CPUs while a timing ran.

A paired timing alternates candidate and baseline calls, so load that is
steady hits both alike. Load from other processes on an oversubscribed
machine is not steady: the scheduler hands whole time slices to one process
and not the other, and a process whose pool threads spin-wait (OpenMP,
TVM's thread pool) stalls when one of its threads is descheduled. On this
project's 2-core machine the same GELU code on both sides of a pair read
0.44x with three busy loops beside it, and 2.50x [2.20, 2.77] inside a
4-process test run. Nothing in the samples themselves tells such a timing
from a real speedup, so it is measured from outside: the CPU time that the
whole machine spent busy during the timing (``/proc/stat``: user, nice,
system, irq, softirq and steal jiffies over all CPUs) minus the CPU time of
this process and its descendants (the candidate and baseline processes;
``psutil``). What is left was used by others. When others used more CPUs
than the timing left free, the timing is marked with a note starting with
:data:`PREFIX` among the measurement's ``suspicious`` reasons: a doubtful
timing is re-timed (:mod:`kstrata.measure.retime`), and a task whose speedup
stays contended is not counted as faster in ``fast_p``
(:func:`kstrata.bench.metrics.excluded_reason`).

Steal time (a virtual machine's CPU taken by its host) counts as others' use.
Off Linux (no ``/proc/stat``) the probe reports nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

#: Start of the contention note among a measurement's ``suspicious`` reasons.
PREFIX = "contended:"

#: Others' average CPU use (in CPUs) tolerated beyond the CPUs the timing left
#: free, as a share of the machine's CPUs, and at least :data:`SLACK_MIN_CPUS`:
#: system daemons and an editor stay under it (measured 0.02-0.08 CPUs on this
#: project's quiet 2-core machine); a busy loop beside a timing on 2 CPUs
#: (1.0), or a build on a quarter of a larger machine's, does not.
SLACK_SHARE = 0.25
SLACK_MIN_CPUS = 0.5

#: Shorter timings are not judged: ``/proc/stat`` counts in jiffies (10 ms),
#: too coarse for a fraction of a CPU over less than this.
MIN_WALL_S = 0.3

_BUSY_FIELDS = (0, 1, 2, 5, 6, 7)  # user nice system irq softirq steal (idle=3, iowait=4)


def _machine_busy_s() -> tuple[float, int] | None:
    """CPU seconds the whole machine has spent busy since boot, and its CPU count
    (``/proc/stat``); ``None`` when it cannot be read."""
    try:
        with open("/proc/stat") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    total = lines[0].split()
    if total[0] != "cpu":
        return None
    per_cpu = sum(1 for ln in lines[1:] if ln.startswith("cpu"))
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    busy = sum(int(total[1 + i]) for i in _BUSY_FIELDS if 1 + i < len(total))
    return busy / ticks, max(per_cpu, 1)


def _own_cpu_s() -> float:
    """CPU seconds (user + system) of this process and its descendants, living
    ones and those that ended and were waited for."""
    import psutil

    me = psutil.Process()
    total = 0.0
    procs = [me]
    try:
        procs += me.children(recursive=True)
    except psutil.Error:
        pass
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        # children_*: processes that ended during the span and were waited for
        total += t.user + t.system + getattr(t, "children_user", 0.0) + getattr(t, "children_system", 0.0)
    return total


@dataclass
class ContentionProbe:
    """Take it just before a timing loop and call :meth:`note` just after.

    Parameters
    ----------
    threads:
        CPUs the timed calls may keep busy at once (the intra-op threads of a
        CPU timing; 1 for a GPU timing, whose host thread launches and waits).

    The probe reads two files and walks this process's children: about 1 ms,
    outside the timed calls.
    """

    threads: int = 1

    def __post_init__(self) -> None:
        self._start = _machine_busy_s()
        self._own = _own_cpu_s() if self._start is not None else 0.0
        self._wall = time.perf_counter()

    def others_cpus(self) -> tuple[float, float, int] | None:
        """``(others, wall_s, cpus)``: other processes' average use in CPUs over
        the probe's span, the span in seconds, and the machine's CPU count;
        ``None`` when it cannot be told (no ``/proc/stat``)."""
        end = _machine_busy_s()
        if self._start is None or end is None:
            return None
        wall = time.perf_counter() - self._wall
        own = _own_cpu_s() - self._own
        busy = end[0] - self._start[0]
        return max(0.0, busy - own) / max(wall, 1e-9), wall, end[1]

    def note(self) -> str | None:
        """The contention note (starting with :data:`PREFIX`) when other
        processes used more CPUs than the timing left free plus
        :data:`SLACK_SHARE` of the CPUs (at least :data:`SLACK_MIN_CPUS`); ``None`` for an uncontended timing, one shorter
        than :data:`MIN_WALL_S`, or where it cannot be told."""
        seen = self.others_cpus()
        if seen is None:
            return None
        others, wall, cpus = seen
        free = max(0, cpus - max(1, self.threads))
        if wall < MIN_WALL_S or others <= free + max(SLACK_MIN_CPUS, SLACK_SHARE * cpus):
            return None
        return (f"{PREFIX} other processes kept {others:.2f} of {cpus} CPUs busy during this timing, "
                f"which used {self.threads} thread(s); candidate and baseline were not timed alike. "
                "Time it again on a quiet machine (`kstrata retime RUN`) before believing the speedup")


def read_note(text: str | None) -> tuple[float, int] | None:
    """``(other processes' busy CPUs, CPUs)`` from a note that
    :meth:`ContentionProbe.note` wrote (None for any other text): the note's
    format and its reading live here together."""
    import re

    if not text or PREFIX not in text:
        return None
    m = re.search(r"other processes kept ([0-9.]+) of (\d+) CPUs", text)
    return (float(m.group(1)), int(m.group(2))) if m else None



def most_favourable_speedup(high: float, notes: list[str] | tuple[str, ...]) -> float | None:
    """The highest speedup (baseline time / candidate time) that a contended
    paired timing whose interval tops out at ``high`` can stand for, when the
    contention alone distorted it; ``None`` when the notes do not bound it
    (a suspicious note other than contention, such as the roofline floor or
    launch overhead, which says nothing about by how much; others that held
    all the CPUs; no interval).

    Reasoning. ``notes`` are the timing's suspicious notes; each contention note
    (:meth:`ContentionProbe.note`, read by :func:`read_note`) gives ``others``,
    the CPUs other processes kept busy on average over the timing, of ``cpus``.
    Contention only slows a side down; the speedup is wrong in the candidate's
    disfavour by the most when all of it fell on the candidate's calls and none
    on the baseline's. Those calls fill a share ``c = 1 / (1 + s)`` of the
    paired loop's wall time at speedup ``s`` (candidate time / baseline time is
    ``1 / s``); taking ``s = high`` makes ``c`` smallest and so the
    concentration worst: others then held up to ``min(cpus, others / c)`` CPUs
    while the candidate ran. Work that needs the whole machine gets the CPUs
    left, ``cpus - others / c``, and a pool whose threads wait on one another
    (OpenMP, TVM) runs no faster than its slowest thread, which is also the
    share left; so the candidate's calls took at most ``cpus / (cpus - others / c)``
    times as long as they would have alone, and the true speedup is at most
    ``high`` times that factor (the largest over the notes). Checked against
    the A/A case in this module's docstring: three busy loops beside a 2-thread GELU on
    2 CPUs (others about 1.2 of 2) give a factor of 2.5 or more, beyond the
    0.44x that timing read. ``kstrata eval`` says ``slower`` for a contended
    timing only when this bound stays below 1 (newcomer nc25: a per-row loop
    read 0.078x [0.066, 0.092] with others at 1.25 of 2 CPUs: at most 0.28x);
    it never says ``faster`` for one.

    Parameters
    ----------
    high:
        The upper end of the speedup's interval (dimensionless, > 0).
    notes:
        The timing's suspicious notes (strings).
    """
    if not notes or not high or high <= 0:
        return None
    share = 1.0 / (1.0 + high)  # the candidate's calls' share of the loop's wall time
    factor = 1.0
    for n in notes:
        seen = read_note(n)
        if seen is None:
            return None
        others, cpus = seen
        left = cpus - others / share
        if left <= 0:
            return None
        factor = max(factor, cpus / left)
    return high * factor
