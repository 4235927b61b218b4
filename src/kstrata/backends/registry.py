"""Backends by name. Entries are imported lazily so that listing them (and
``kstrata env``) works when a backend's library is missing.

Third-party backends register through the ``kstrata.backends`` entry-point
group (``name = "package.module:Class"``).
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # base imports torch; naming a backend (or refusing a name) need not
    from kstrata.backends.base import Backend

#: name -> "module:factory" ; the factory is a Backend subclass or a callable
#: returning a Backend.
BUILTIN: dict[str, str] = {
    "pytorch": "kstrata.backends.pytorch:PyTorchBackend",
    "pytorch-cuda": "kstrata.backends.pytorch_cuda:PyTorchCudaBackend",
    "tvm-llvm": "kstrata.backends.tvm.backend:TVMLLVMBackend",
    "tvm-opencl": "kstrata.backends.tvm.backend:TVMOpenCLBackend",
    "tvm-cuda": "kstrata.backends.tvm.backend:TVMCUDABackend",
    "triton": "kstrata.backends.triton:TritonBackend",
    "triton-interp": "kstrata.backends.triton:TritonInterpBackend",
    "tilelang-c": "kstrata.backends.tilelang:TileLangCBackend",
    "tilelang-cuda": "kstrata.backends.tilelang:TileLangCudaBackend",
}


class UnknownBackendError(ValueError):
    """A backend name that is not registered."""


def names() -> list[str]:
    """All registered backend names, built-in first."""
    extra = [ep.name for ep in entry_points(group="kstrata.backends") if ep.name not in BUILTIN]
    return list(BUILTIN) + sorted(extra)


def entry(name: str) -> str:
    """The ``"module:factory"`` entry of the backend called ``name``, without importing
    it (nor torch): the command line checks a ``--backend`` value with it before
    anything heavy loads.

    Raises
    ------
    UnknownBackendError
        For a name that is not registered (the message names the close ones and lists
        the known ones).
    """
    target = BUILTIN.get(name)
    if target is None:
        for ep in entry_points(group="kstrata.backends"):
            if ep.name == name:
                target = ep.value
                break
    if target is None:
        import difflib

        known = names()
        close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.5) or \
            [k for k in known if str(name) and str(name) in k]  # 'cuda': tvm-cuda, pytorch-cuda, ...
        hint = f" (did you mean {' or '.join(close[:3])}?)" if close else ""
        raise UnknownBackendError(
            f"unknown backend {name!r}{hint}; known backends: {', '.join(known)}; `kstrata env` says which run here"
        )
    return target


def get_backend(name: str) -> Backend:
    """Instantiate the backend called ``name``.

    Raises
    ------
    UnknownBackendError
        For a name that is not registered (the message lists the known ones).
    """
    module_name, _, attr = entry(name).partition(":")
    factory = getattr(importlib.import_module(module_name), attr)
    return factory()
