"""The contention probe tells a timing that other processes competed with
(kstrata.measure.contention), and fast_p does not count such a timing."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kstrata.bench.metrics import TaskOutcome, excluded_reason
from kstrata.measure.contention import MIN_WALL_S, PREFIX, ContentionProbe, _own_cpu_s

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="needs Linux /proc/stat")


def _burners(n: int, seconds: float) -> None:
    """``n`` busy loops that are not this process's descendants (their shell exits
    at once, so they are re-parented): to the probe they are other processes."""
    loop = f"timeout {seconds} {sys.executable} -c 'while True: pass' >/dev/null 2>&1 &"
    subprocess.run(["sh", "-c", " ".join([loop] * n)], check=True)


def test_a_busy_loop_beside_the_timing_is_reported():
    cpus = os.cpu_count() or 1
    _burners(cpus, 1.5)  # one per CPU: others hold about all of them
    time.sleep(0.2)
    probe = ContentionProbe(threads=cpus)  # the timing uses every CPU: none is left free
    time.sleep(1.0)  # idle here, while the busy loop runs
    others, wall, n = probe.others_cpus()
    assert n == cpus and wall >= 1.0
    assert others > 0.4 * cpus, others
    note = probe.note()
    assert note is not None and note.startswith(PREFIX) and f"of {cpus} CPUs" in note


def test_own_children_are_not_others():
    """A child's CPU time (reaped: in children_user/children_system) counts as the
    timing's own, so the candidate and baseline processes are never 'others'."""
    before = _own_cpu_s()
    subprocess.run([sys.executable, "-c", "import time\nwhile time.process_time() < 0.6: pass"], check=True)
    assert _own_cpu_s() - before >= 0.55


def test_a_short_timing_is_not_judged():
    probe = ContentionProbe(threads=1)
    time.sleep(MIN_WALL_S / 10)
    assert probe.note() is None


def test_a_contended_speedup_is_not_counted_as_faster():
    m = {"suspicious": [f"{PREFIX} other processes kept 1.10 of 2 CPUs busy"]}
    why = excluded_reason({}, m)
    assert why is not None and why.startswith("contended timing")
    win = TaskOutcome("gelu", correct=True, speedup=2.5, speedup_ci=(2.2, 2.8), excluded=why)
    assert not win.fast(1.0)
    assert excluded_reason({}, {"suspicious": []}) is None


def test_the_note_reads_back_what_it_says():
    from kstrata.measure.contention import PREFIX, read_note

    text = (f"{PREFIX} other processes kept 1.13 of 2 CPUs busy during this timing, which used 2 thread(s); "
            "candidate and baseline were not timed alike.")
    assert read_note(text) == (1.13, 2)
    assert read_note("timing stayed noisy") is None and read_note(None) is None
