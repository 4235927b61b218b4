"""Warm judge pools lent within a process (kstrata.execute.shared)."""

from __future__ import annotations

import os

import psutil
import pytest

from kstrata.execute import shared

pytestmark = pytest.mark.usefixtures("keep_idle_processes")


@pytest.fixture(autouse=True)
def _no_idle_pools():
    shared.close_idle()
    yield
    shared.close_idle()


def _pid(pool) -> int:
    r = pool.call("os:getpid", timeout_s=60)
    assert r.ok, r.error
    return r.value


def test_a_given_back_pool_is_lent_again_with_its_worker():
    with shared.lend(env={"KSTRATA_T": "a"}) as p:
        first = _pid(p)
    with shared.lend(env={"KSTRATA_T": "a"}) as p:
        assert _pid(p) == first  # the same warm worker
    assert psutil.pid_exists(first)  # idle, not stopped
    assert shared.close_idle() == 1
    assert not psutil.pid_exists(first) or psutil.Process(first).status() == psutil.STATUS_ZOMBIE


def test_another_environment_gets_another_worker(monkeypatch):
    with shared.lend(env={"KSTRATA_T": "a"}) as p:
        a = _pid(p)
    with shared.lend(env={"KSTRATA_T": "b"}) as p:
        assert _pid(p) != a
    # what a worker inherits from this process counts too (a test's own cache dir)
    monkeypatch.setenv("KSTRATA_CACHE_DIR", "/nonexistent/kstrata-test-cache")
    with shared.lend(env={"KSTRATA_T": "a"}) as p:
        assert _pid(p) != a
        r = p.call("os:getenv", "KSTRATA_CACHE_DIR", timeout_s=60)
        assert r.value == "/nonexistent/kstrata-test-cache"


def test_a_pool_is_never_lent_twice_at_once():
    p1 = shared.lend(env={"KSTRATA_T": "c"})
    p2 = shared.lend(env={"KSTRATA_T": "c"})
    try:
        assert _pid(p1) != _pid(p2)
    finally:
        p1.close()
        p2.close()


def test_an_interrupted_call_stops_the_pool_instead_of_lending_it(monkeypatch):
    p = shared.lend(env={"KSTRATA_T": "d"})
    pid = _pid(p)
    real = type(p._pool).call

    def interrupted(self, *a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(type(p._pool), "call", interrupted)
    with pytest.raises(KeyboardInterrupt):
        p.call("os:getpid")
    monkeypatch.setattr(type(p._pool), "call", real)
    p.close()
    assert shared.close_idle() == 0  # not kept
    with shared.lend(env={"KSTRATA_T": "d"}) as q:
        assert _pid(q) != pid


def test_a_given_back_handle_cannot_be_used_and_idle_pools_are_capped():
    pids = []
    for i in range(shared.MAX_IDLE + 2):
        with shared.lend(env={"KSTRATA_T": f"e{i}"}) as p:
            pids.append(_pid(p))
    with pytest.raises(ValueError, match="given back"):
        p.call("os:getpid")
    with pytest.raises(ValueError, match="given back"):
        p.pids  # noqa: B018
    alive = [q for q in pids if psutil.pid_exists(q) and psutil.Process(q).status() != psutil.STATUS_ZOMBIE]
    assert sorted(alive) == sorted(pids[-shared.MAX_IDLE:])  # the oldest were stopped
    assert shared.close_idle() == shared.MAX_IDLE


def test_pool_for_lends_a_plain_pool_and_builds_others():
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for
    from kstrata.execute import WorkerPool

    b = get_backend("pytorch")
    with pool_for(b) as p:
        assert isinstance(p, shared.LentPool)
        first = _pid(p)
    with pool_for(b) as p:
        assert _pid(p) == first
    with pool_for(b, size=2) as p:
        assert isinstance(p, WorkerPool) and _pid(p) != first
    assert os.getpid() != first
