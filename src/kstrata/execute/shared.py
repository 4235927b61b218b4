"""Warm judge pools lent within one process.

Starting a judge worker costs an interpreter that imports torch and kstrata's
verifier, and the worker's first verification starts a sandbox zygote (bubblewrap,
another interpreter, torch and the backend): 15-25 s of wall time on a 2-core
machine before the first test input is drawn (``benchmarks/results/verify_profile.txt``).
``kstrata optimize`` pays it once per run. A process that verifies one candidate
at a time through :func:`kstrata.evaluate`, :func:`kstrata.verify.verify_candidate`
without a pool, or ``kstrata eval`` run in-process, paid it on every call.

:func:`lend` hands out a one-worker :class:`~kstrata.execute.pool.WorkerPool`
for a given interpreter and worker environment, and takes it back when the
borrower closes it: the next borrower with the same interpreter and the same
environment gets the same warm worker (and its warm zygotes). Nothing about a
verification changes: the judge worker is kstrata's own trusted process, which
``optimize`` already keeps for all of a run's candidates, and every candidate
still runs in its own sandboxed process forked from the zygote.

A pool is never lent to two borrowers at once. A pool whose call was
interrupted (an exception raised through :meth:`LentPool.call`, such as
``KeyboardInterrupt``) is closed rather than lent again: its worker may still
be answering the old request. At most :data:`MAX_IDLE` idle pools are kept per
process (the least recently returned is closed), and all are closed at exit.
"""

from __future__ import annotations

import atexit
import threading
from collections import OrderedDict
from typing import Any

from kstrata.execute import memory
from kstrata.execute.pool import WorkerPool, worker_env

#: Idle pools kept per process. Each holds a judge worker (~300 MB with torch) and
#: its idle zygotes (``kstrata.sandbox.client.MAX_IDLE_ZYGOTES``, ~250 MB each).
MAX_IDLE = 2

_lock = threading.Lock()
_idle: OrderedDict[tuple, list[WorkerPool]] = OrderedDict()


def _key(python: str | None, env: dict[str, str]) -> tuple:
    """What a worker inherits at its start: the interpreter and its whole environment
    (:func:`~kstrata.execute.pool.worker_env` of this process now, so a changed
    ``KSTRATA_CACHE_DIR`` or thread setting gets another worker)."""
    full = worker_env(env)
    full.pop("TMPDIR", None)  # the pool's own temporary directory unless given
    return (python or "", tuple(sorted(full.items())))


class LentPool:
    """A :class:`~kstrata.execute.pool.WorkerPool` lent by :func:`lend`.

    It has the pool's interface (``call``, ``pids``, ``size``, ``env``...);
    :meth:`close` gives it back instead of stopping its worker. Use it once:
    after ``close()`` it raises ``ValueError`` like a closed pool.
    """

    def __init__(self, pool: WorkerPool, key: tuple):
        self._pool: WorkerPool | None = pool
        self._key = key
        self._tainted = False

    def call(self, target: str, *args: Any, **kwargs: Any) -> Any:
        """:meth:`WorkerPool.call`; an exception raised through it (an interrupt)
        keeps the pool from being lent again."""
        if self._pool is None:
            raise ValueError("this lent WorkerPool was given back (closed)")
        try:
            return self._pool.call(target, *args, **kwargs)
        except BaseException:
            self._tainted = True
            raise

    def close(self) -> None:
        """Give the pool back (or stop it, when its last call was interrupted)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            _give_back(self._key, pool, self._tainted)

    def __getattr__(self, name: str) -> Any:
        pool = self.__dict__.get("_pool")
        if pool is None:
            raise ValueError("this lent WorkerPool was given back (closed)")
        return getattr(pool, name)

    def __enter__(self) -> "LentPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def lend(python: str | None = None, env: dict[str, str] | None = None) -> LentPool:
    """A one-worker pool for ``python`` with worker environment ``env`` (as
    :class:`~kstrata.execute.pool.WorkerPool` takes them): an idle warm one with
    the same key when there is one, else a new one. Close it to give it back."""
    env = dict(env or {})
    key = _key(python, env)
    with _lock:
        pools = _idle.get(key)
        pool = pools.pop() if pools else None
        if pools == []:
            del _idle[key]
    if pool is None:
        pool = WorkerPool(size=1, python=python, env=env)
    return LentPool(pool, key)


def _give_back(key: tuple, pool: WorkerPool, tainted: bool) -> None:
    # an idle pool is a cache (its worker and zygotes: 1-2 GB): not kept where the machine's memory is short
    if tainted or getattr(pool, "_closed", False) or memory.pressure():
        pool.close()
        return
    extra: list[WorkerPool] = []
    with _lock:
        _idle.setdefault(key, []).append(pool)
        _idle.move_to_end(key)
        while sum(len(v) for v in _idle.values()) > MAX_IDLE:
            oldest = next(iter(_idle))
            extra.append(_idle[oldest].pop(0))
            if not _idle[oldest]:
                del _idle[oldest]
    for p in extra:
        p.close()


def close_idle() -> int:
    """Stop every idle lent pool of this process; returns how many were stopped."""
    with _lock:
        pools = [p for v in _idle.values() for p in v]
        _idle.clear()
    for p in pools:
        p.close()
    return len(pools)


atexit.register(close_idle)
