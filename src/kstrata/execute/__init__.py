"""Killable worker execution (DEVELOPERS.md, "Worker execution").

>>> from kstrata.execute import WorkerPool
>>> with WorkerPool(size=1) as pool:
...     r = pool.call("math:sqrt", 16.0, timeout_s=10)
>>> r.ok, r.value
(True, 4.0)
"""

from kstrata.execute.executor import Executor, LocalExecutor
from kstrata.execute.pool import ENV_ALLOW, CallResult, WorkerPool, worker_env

__all__ = ["CallResult", "ENV_ALLOW", "Executor", "LocalExecutor", "WorkerPool", "worker_env"]
