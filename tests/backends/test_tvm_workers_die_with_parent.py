"""After a kstrata process is killed, nothing it started for TVM runs on
(issue #23): TVM's popen workers die with the process that started them, and
a worker-pool worker takes its whole process group with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytest.importorskip("tvm")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _run_until_pid(code: str) -> tuple[subprocess.Popen, int]:
    """Start ``code`` in a fresh interpreter; it prints the pid to watch."""
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True,
                         start_new_session=True)
    line = p.stdout.readline()
    assert line.strip().isdigit(), line
    return p, int(line)


def _kill_parent_then_expect_gone(parent: subprocess.Popen, pid: int, what: str) -> None:
    """SIGKILL ``parent`` (the stand-in for a kstrata command) and check that
    ``pid`` (what it started for TVM) ends within 10 s."""
    try:
        assert _alive(pid)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        assert _gone_within(pid, 10), f"{what} ran on after its kstrata process was killed"
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _gone_within(pid: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.2)
    return False


def test_a_tvm_popen_worker_dies_with_the_process_that_started_it():
    parent, worker = _run_until_pid("""
        import time
        from kstrata.backends.tvm.tune import popen_workers_die_with_parent
        assert popen_workers_die_with_parent()
        from tvm.support.popen_pool import PopenPoolExecutor
        pool = PopenPoolExecutor(max_workers=1)
        pool.submit(time.sleep, 300)
        import os, psutil
        for _ in range(300):  # the pool forks its worker from one of its threads (psutil scans by ppid)
            kids = [str(c.pid) for c in psutil.Process().children()]
            if kids:
                break
            time.sleep(0.1)
        print(kids[0] if kids else "none", flush=True)
        if not kids:
            os._exit(1)
        time.sleep(300)
    """)
    _kill_parent_then_expect_gone(parent, worker, "the popen worker")


def test_a_pool_worker_takes_its_process_group_with_it():
    # the pool worker starts `sleep 300` in the background (in its own process
    # group) and the stand-in for a kstrata command prints its pid
    parent, child = _run_until_pid("""
        import os, time
        from kstrata.execute import WorkerPool
        with WorkerPool(size=1) as pool:
            pool.call("os:system", "sleep 300 & echo $! > /tmp/kstrata_test_sleep_%d.pid" % os.getpid())
            time.sleep(1)
            print(open("/tmp/kstrata_test_sleep_%d.pid" % os.getpid()).read().strip(), flush=True)
            time.sleep(300)
    """)
    try:
        _kill_parent_then_expect_gone(parent, child, "a process the pool worker started")
    finally:
        try:
            os.unlink(f"/tmp/kstrata_test_sleep_{parent.pid}.pid")
        except OSError:
            pass
