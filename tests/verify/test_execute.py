"""kstrata.execute: calls, failures as data, isolation, reuse, executors."""

from __future__ import annotations

import os
import time

import pytest

from kstrata.execute import LocalExecutor, WorkerPool


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(size=1) as p:
        yield p


def test_call_returns_value_and_reuses_worker(pool):
    a = pool.call("math:sqrt", 16.0, timeout_s=30)
    b = pool.call("math:hypot", 3.0, 4.0, timeout_s=30)
    assert (a.ok, a.kind, a.value) == (True, "ok", 4.0)
    assert b.value == 5.0
    assert a.worker_pid == b.worker_pid != os.getpid()


def test_exception_is_data(pool):
    r = pool.call("math:sqrt", -1.0, timeout_s=30)
    assert (r.ok, r.kind) == (False, "exception")
    assert "ValueError" in r.error and "math domain error" in r.error
    assert "Traceback" in r.traceback


def test_segfault_gives_crash_and_pool_goes_on(pool):
    r = pool.call("ctypes:string_at", 0, timeout_s=30)
    assert r.kind == "crash" and "SIGSEGV" in r.error
    assert "Fatal Python error" in r.traceback  # faulthandler output from the worker log
    after = pool.call("math:sqrt", 4.0, timeout_s=30)
    assert after.ok and after.worker_pid != r.worker_pid


def test_hang_is_killed_at_deadline(pool):
    t0 = time.perf_counter()
    r = pool.call("time:sleep", 60, timeout_s=1.0)
    assert r.kind == "timeout" and time.perf_counter() - t0 < 15
    with pytest.raises(ProcessLookupError):
        os.kill(r.worker_pid, 0)
    assert pool.call("math:sqrt", 9.0, timeout_s=30).value == 3.0


def test_memory_limit_gives_oom():
    with WorkerPool(size=1, memory_mb=512) as p:
        r = p.call("builtins:bytearray", 2 * 1024**3, timeout_s=30)
        assert r.kind == "oom" and "MemoryError" in r.error
        assert p.call("math:sqrt", 1.0, timeout_s=30).ok


def test_environment_is_scrubbed(monkeypatch):
    monkeypatch.setenv("KSTRATA_TEST_SECRET", "leak")
    with WorkerPool(size=1, env={"KSTRATA_PASSED": "yes"}) as p:
        assert p.call("os:getenv", "KSTRATA_TEST_SECRET", timeout_s=30).value is None
        assert p.call("os:getenv", "KSTRATA_PASSED", timeout_s=30).value == "yes"
        assert p.call("os:getenv", "PATH", timeout_s=30).value == os.environ["PATH"]


def test_no_network_namespace(pool):
    pool.call("math:sqrt", 1.0, timeout_s=30)
    (worker,) = [s[0] for s in list(pool._slots.queue) if s[0] is not None]
    if not worker.net_isolated:
        pytest.skip(f"OS refused a network namespace: {worker.net_reason}")
    names = pool.call("socket:if_nameindex", timeout_s=30).value
    assert [n for _, n in names] == ["lo"]


OTHER_PYTHON = "/usr/bin/python3"


@pytest.mark.skipif(not os.path.exists(OTHER_PYTHON), reason="no second interpreter")
def test_other_interpreter():
    """A worker on another interpreter needs only kstrata importable there."""
    other = OTHER_PYTHON
    with WorkerPool(size=1, python=other) as p:
        r = p.call("sys:getrecursionlimit", timeout_s=30)
        assert r.ok
        assert p.call("os:readlink", "/proc/self/exe", timeout_s=30).value == os.path.realpath(other)


def test_executor_submit_and_map():
    with LocalExecutor(size=2) as ex:
        fut = ex.submit("math:factorial", 5, timeout_s=30)
        results = ex.map("math:pow", [(2, 3), (3, 2), (-1, 0.5)], timeout_s=30)
        assert fut.result().value == 120
        assert [r.value for r in results[:2]] == [8.0, 9.0]
        assert results[2].kind == "exception"
        assert len({r.worker_pid for r in results} | {fut.result().worker_pid}) <= 2


def test_closed_pool_refuses():
    p = WorkerPool(size=1)
    p.call("math:sqrt", 1.0, timeout_s=30)
    pids = p.pids
    p.close()
    with pytest.raises(ValueError):
        p.call("math:sqrt", 1.0)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_worker_env_pins_thread_pools(monkeypatch):
    """Workers get fixed TVM/OpenMP thread counts and passive waiting (timing
    two thread pools interleaved otherwise lets one's spinning threads steal
    the other's cores); a value set by the caller wins."""
    import os

    from kstrata.execute.pool import worker_env

    for var in ("TVM_NUM_THREADS", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "TVM_THREAD_POOL_SPIN_COUNT"):
        monkeypatch.delenv(var, raising=False)
    env = worker_env()
    cpus = str(len(os.sched_getaffinity(0)))
    assert env["TVM_NUM_THREADS"] == cpus and env["OMP_NUM_THREADS"] == cpus
    assert env["OMP_WAIT_POLICY"] == "PASSIVE" and env["TVM_THREAD_POOL_SPIN_COUNT"] == "0"
    monkeypatch.setenv("TVM_NUM_THREADS", "1")
    assert worker_env()["TVM_NUM_THREADS"] == "1"
    assert worker_env({"OMP_WAIT_POLICY": "ACTIVE"})["OMP_WAIT_POLICY"] == "ACTIVE"


def test_worker_exits_when_its_parent_dies(tmp_path):
    """A worker stuck in a candidate that never returns does not outlive the
    kstrata process that started it (e.g. killed by Ctrl-C or `timeout`)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pidfile = tmp_path / "child.pid"
    child = (f"from kstrata.execute.worker import exit_with_parent; import os; exit_with_parent(0.1); "
             f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\nwhile True: pass")
    parent = subprocess.Popen([sys.executable, "-c",
                               f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {child!r}]); "
                               "time.sleep(60)"])
    deadline = time.time() + 30
    while not pidfile.exists() or not pidfile.read_text():
        assert time.time() < deadline, "child did not start"
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the worker outlived its parent")
