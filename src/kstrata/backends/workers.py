"""Worker pools set up for a backend: the right interpreter (the TileLang
environment for ``tilelang-*``) and the backend's environment variables
(``TRITON_INTERPRET=1`` for ``triton-interp``)."""

from __future__ import annotations

from typing import Any

from kstrata.backends import envs
from kstrata.backends.base import Backend


def pool_for(backend: Backend, size: int = 1, **kwargs: Any) -> Any:
    """A :class:`kstrata.execute.WorkerPool` whose workers can load ``backend``'s
    candidates.

    A plain one-worker pool (no options but ``env``) is lent from this process's
    warm pools (:func:`kstrata.execute.shared.lend`): closing it gives its judge
    worker, and the worker's sandbox zygotes, to the next caller with the same
    interpreter and environment instead of stopping them.

    Raises
    ------
    kstrata.backends.envs.EnvMissingError
        When the backend needs an environment that ``kstrata setup`` has not created.
    """
    from kstrata.execute import WorkerPool
    from kstrata.execute.shared import lend

    python = envs.python_for(backend.name)
    env = dict(getattr(backend, "worker_env", {}) or {})
    env.update(kwargs.pop("env", None) or {})
    if size == 1 and not kwargs:
        return lend(str(python) if python else None, env)
    return WorkerPool(size=size, python=str(python) if python else None, env=env, **kwargs)
