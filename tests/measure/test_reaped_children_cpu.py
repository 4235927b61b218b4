"""The judge's reading of a candidate's CPU between timed calls counts the
children its processes forked and reaped (red-team rt52): a child forked in
a timed call that computes the next output while the judge flushes the cache
and ends before the next call was on no process list, and its CPU, moved
into the parent's ``cutime`` when reaped, was in no reading, so
:func:`kstrata.measure.remote.deferred_work_note` never saw it."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from kstrata.measure.remote import RemoteCandidate

#: on each line read: fork a child that spins ``0.2 s`` of CPU and ends; reap it; answer 'done'
FORKS = ("import os, sys, time\n"
         "for line in sys.stdin:\n"
         " pid = os.fork()\n"
         " if pid == 0:\n"
         "  t = time.process_time()\n"
         "  while time.process_time() - t < 0.2: pass\n"
         "  os._exit(0)\n"
         " os.waitpid(pid, 0)\n"
         " print('done', flush=True)\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process CPU clocks and /proc are Linux's")
@pytest.mark.parametrize("zygote", [False, True])
def test_work_of_a_reaped_child_is_in_the_candidates_cpu(zygote):
    """``zygote``: the forking process is the sandbox's zygote (its reaped
    orphans), not on the candidate's list; else it is the candidate."""
    p = subprocess.Popen([sys.executable, "-c", FORKS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        proc = SimpleNamespace(_own_processes=lambda: [] if zygote else [p.pid], zygote_pid=p.pid if zygote else 0)
        cand = RemoteCandidate(proc)
        before = cand.cpu_ms()
        p.stdin.write("go\n")
        p.stdin.flush()
        assert p.stdout.readline().strip() == "done"
        after = cand.cpu_ms()
        assert after - before >= 150.0, (before, after)  # the child's 200 ms (clock ticks: 10 ms)
    finally:
        p.kill()
        p.wait()
