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

    Raises
    ------
    kstrata.backends.envs.EnvMissingError
        When the backend needs an environment that ``kstrata setup`` has not created.
    """
    from kstrata.execute import WorkerPool

    python = envs.python_for(backend.name)
    env = dict(getattr(backend, "worker_env", {}) or {})
    env.update(kwargs.pop("env", None) or {})
    return WorkerPool(size=size, python=str(python) if python else None, env=env, **kwargs)
