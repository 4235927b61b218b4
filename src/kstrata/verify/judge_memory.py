"""Memory for the judge's own large work (the float64 oracle), found before it gives up.

The judge computes a float64 oracle only where a test needs it
(:meth:`kstrata.verify.runner.ShapeRun._exact_oracle`), and checks first that
the machine has the memory: a float64 forward that runs the host out of memory
would take the judge with it. Available memory is the whole machine's, and it
moves: this process keeps idle sandboxes for later candidates
(:mod:`kstrata.sandbox.client`, 0.3-0.7 GB each with torch imported), and other
processes (a second verification, a test worker beside it) allocate and free
gigabytes within seconds. A single reading gave up on a test that a moment
later had room (CI of 2026-12-06: "the machine had 890 MiB available, under the
1536 MiB it needs" for gemv at 8192 x 8192, late in a 2-worker test run on a
24 GB machine), and the verification ended with an error that was the judge's
state, not the candidate's.

:func:`wait_for_memory` first ends this process's idle sandboxes (a cache: the
next candidate starts a new one), then waits, re-reading, for a bounded time.
"""

from __future__ import annotations

import gc
import time

from kstrata.execute.memory import available

#: Longest wait (s) for memory another process may free.
WAIT_S = 30.0
#: Seconds between readings while waiting.
POLL_S = 0.5


def wait_for_memory(need: float, deadline: float | None = None, wait_s: float = WAIT_S) -> int:
    """Wait until at least ``need`` bytes are available; return the last reading (bytes).

    Where fewer are available, this process's idle zygotes are ended
    (:func:`kstrata.sandbox.client.close_zygotes`: none is in use by a
    candidate process) and Python's garbage collected; then the memory is read
    again every :data:`POLL_S` s until ``need`` is there, ``wait_s`` s have
    passed, or ``deadline`` (a :func:`time.monotonic` time) comes, whichever is
    first. The caller decides what a reading still under ``need`` means; this
    raises nothing.
    """
    have = available()
    if have >= need:
        return have
    from kstrata.sandbox.client import close_zygotes

    close_zygotes()
    gc.collect()
    end = time.monotonic() + wait_s
    if deadline is not None:
        end = min(end, deadline)
    while True:
        have = available()
        if have >= need or time.monotonic() + POLL_S > end:
            return have
        time.sleep(POLL_S)
