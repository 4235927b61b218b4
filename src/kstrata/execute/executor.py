"""Executors: where worker calls run. The local pool is the default; a Ray
executor (planned) implements the same :class:`Executor` interface, the way
MetaSchedule puts ``LocalRunner`` and ``RPCRunner`` behind one ``Runner``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from kstrata.execute.pool import CallResult, WorkerPool


class Executor(ABC):
    """Runs ``"module:function"`` calls somewhere killable.

    ``submit`` returns a :class:`concurrent.futures.Future` whose result is a
    :class:`CallResult` (the future itself never holds an exception for a
    callee failure).
    """

    @abstractmethod
    def submit(self, target: str, *args: Any, timeout_s: float | None = 600.0,
               **kwargs: Any) -> Future[CallResult]:
        """Start ``target(*args, **kwargs)``; returns a future of its CallResult."""

    def map(self, target: str, arg_tuples: Iterable[Sequence[Any]],
            timeout_s: float | None = 600.0) -> list[CallResult]:
        """``target(*args)`` for each element of ``arg_tuples``, results in order."""
        futures = [self.submit(target, *args, timeout_s=timeout_s) for args in arg_tuples]
        return [f.result() for f in futures]

    @abstractmethod
    def close(self) -> None:
        """Release workers; the executor cannot be used afterwards."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalExecutor(Executor):
    """An :class:`Executor` over a local :class:`WorkerPool`.

    Parameters
    ----------
    pool:
        The pool to use (not closed by :meth:`close` when passed in); by
        default a new ``WorkerPool(**pool_kwargs)``, owned and closed here.
    """

    def __init__(self, pool: WorkerPool | None = None, **pool_kwargs: Any):
        self._owned = pool is None
        self.pool = pool or WorkerPool(**pool_kwargs)
        self._threads = ThreadPoolExecutor(max_workers=self.pool.size, thread_name_prefix="kstrata-exec")

    def submit(self, target: str, *args: Any, timeout_s: float | None = 600.0,
               **kwargs: Any) -> Future[CallResult]:
        return self._threads.submit(self.pool.call, target, *args, timeout_s=timeout_s, **kwargs)

    def close(self) -> None:
        self._threads.shutdown(wait=True)
        if self._owned:
            self.pool.close()
