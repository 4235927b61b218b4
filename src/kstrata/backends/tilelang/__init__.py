"""TileLang backends: ``tilelang-c`` (CPU, TileLang's C target) and
``tilelang-cuda`` (NVIDIA GPUs).

TileLang cannot be imported in the main environment (DEVELOPERS.md), so these
classes import it lazily inside :meth:`TileLangBackend.load`, which runs in a
worker started with :func:`kstrata.backends.envs.python_for` (``kstrata setup``
creates that interpreter). See :mod:`kstrata.backends.tilelang.backend` for the
candidate contract.
"""

from kstrata.backends.tilelang.backend import (
    TileLangBackend,
    TileLangCBackend,
    TileLangCudaBackend,
    compose_source,
)

__all__ = ["TileLangBackend", "TileLangCBackend", "TileLangCudaBackend", "compose_source"]
