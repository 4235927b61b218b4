"""Executors from strings: ``--executor local|ray|ray:ADDRESS`` (names from
strings, objects from code, as MetaSchedule's ``runner="local"``)."""

from __future__ import annotations

from typing import Any

from kstrata.execute.executor import Executor, LocalExecutor
from kstrata.execute.pool import CallResult

EXECUTOR_HELP = ("local (worker processes on this host) or ray[:ADDRESS] (Ray tasks: "
                 "one candidate per GPU; ADDRESS host:port, ray://host:port or auto; "
                 "none starts Ray here)")


class ExecutorSpecError(ValueError):
    """An ``--executor`` value that cannot be used; the message says what to do."""


def parse_executor(spec: str) -> tuple[str, str | None]:
    """``"local"`` -> ``("local", None)``, ``"ray"`` -> ``("ray", None)``,
    ``"ray:ADDRESS"`` -> ``("ray", ADDRESS)``.

    Raises
    ------
    ExecutorSpecError
        For another kind, or an empty or malformed address.
    """
    from kstrata.execute.ray_executor import split_address

    kind, sep, address = spec.strip().partition(":")
    if kind == "local" and not sep:
        return "local", None
    if kind != "ray":
        raise ExecutorSpecError(f"unknown executor {spec!r}; use {EXECUTOR_HELP}")
    if not sep:
        return "ray", None
    if address != "auto" and split_address(address) is None:
        raise ExecutorSpecError(
            f"bad Ray address in {spec!r}; use ray:HOST:PORT (the head node, e.g. "
            "ray:10.0.0.5:6379), ray:ray://HOST:10001 (Ray Client) or ray:auto")
    return "ray", address


def make_executor(spec: str | Executor = "local", *, backend: Any = None, size: int = 1,
                  num_gpus_per_task: float | None = None, **kwargs: Any) -> Executor:
    """An executor whose workers can load ``backend``'s candidates.

    Parameters
    ----------
    spec:
        ``"local"``, ``"ray"`` (start Ray on this host, or use the one this
        process joined), ``"ray:ADDRESS"`` (join a cluster), or an
        :class:`Executor`, returned as is.
    backend:
        A :class:`kstrata.backends.base.Backend`: its worker interpreter (the
        TileLang environment) and ``worker_env``, as
        :func:`kstrata.backends.workers.pool_for` sets them.
    size:
        Workers of a local executor (concurrent calls).
    num_gpus_per_task:
        GPUs per device call on Ray; default 1 for a backend whose device is
        ``cuda*``, else 0.
    **kwargs:
        More :class:`~kstrata.execute.ray_executor.RayExecutor` or
        :class:`~kstrata.execute.pool.WorkerPool` arguments.

    Raises
    ------
    ExecutorSpecError
        For a bad ``spec`` or a Ray address where no cluster answers.
    kstrata.backends.envs.EnvMissingError
        When the backend needs an environment ``kstrata setup`` has not made.
    """
    if isinstance(spec, Executor):
        return spec
    kind, address = parse_executor(spec)
    pool_kwargs = dict(kwargs)
    if backend is not None:
        from kstrata.backends import envs

        python = envs.python_for(backend.name)
        if python is not None:
            pool_kwargs.setdefault("python", str(python))
        env = dict(getattr(backend, "worker_env", {}) or {})
        env.update(pool_kwargs.pop("env", None) or {})
        pool_kwargs["env"] = env
    if kind == "local":
        return LocalExecutor(size=size, **pool_kwargs)
    from kstrata.execute.ray_executor import RayExecutor, RayUnavailableError

    if num_gpus_per_task is None:
        device = str(getattr(backend, "device", "cpu"))
        num_gpus_per_task = 1 if device.startswith("cuda") else 0
    try:
        return RayExecutor(address, num_gpus_per_task=num_gpus_per_task, **pool_kwargs)
    except RayUnavailableError as e:
        raise ExecutorSpecError(str(e)) from None


class Caller:
    """The blocking ``call`` of a :class:`~kstrata.execute.pool.WorkerPool` over
    any :class:`Executor`, so an executor stands wherever a pool is accepted
    (``verify_candidate(pool=...)``)."""

    def __init__(self, executor: Executor):
        self.executor = executor

    def call(self, target: str, *args: Any, timeout_s: float | None = 600.0, **kwargs: Any) -> CallResult:
        """``executor.submit(...).result()``."""
        return self.executor.submit(target, *args, timeout_s=timeout_s, **kwargs).result()
