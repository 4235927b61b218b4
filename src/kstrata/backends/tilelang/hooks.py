"""Launch hooks on TileLang's compiled kernels: count launches, or make them no-ops.

The verifier uses them for the ``kernel_launched`` and ``kernel_does_work``
checks, as with Triton (:mod:`kstrata.backends.triton.hooks`). Every TileLang
kernel call — ``kernel(x)`` on the object ``@tilelang.jit`` returns, and the
eager mode's ``factory(x)`` — ends in ``tilelang.jit.kernel.JITKernel.__call__``,
which is patched here (runs inside the TileLang environment's worker).

:func:`noop` keeps the adapter's own work (checking arguments, allocating the
``out_idx`` outputs with ``torch.empty``, which the verifier poisons) and skips
only the compiled code: the C library's ``call`` for the ``cython`` adapter
(TileLang's C target), the executable for ``tvm_ffi`` (its default on CUDA).
A kernel whose adapter allocates outputs inside the compiled code cannot be
skipped that way: its call then raises, and the caller's candidate fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class LaunchCounter:
    """Number of TileLang kernel launches seen inside :func:`count`."""

    launches: int = 0


@contextmanager
def _patched(make: Any) -> Iterator[None]:
    from tilelang.jit.kernel import JITKernel

    orig = JITKernel.__dict__["__call__"]
    JITKernel.__call__ = make(orig)
    try:
        yield
    finally:
        JITKernel.__call__ = orig


@contextmanager
def count() -> Iterator[LaunchCounter]:
    """Count kernel launches (calls of compiled TileLang kernels)."""
    counter = LaunchCounter()

    def make(orig: Any) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            counter.launches += 1
            return orig(self, *args, **kwargs)
        return call

    with _patched(make):
        yield counter


class _SkipCompiled:
    """Inside the block, ``adapter``'s compiled code does nothing."""

    def __init__(self, adapter: Any):
        self.adapter = adapter
        self.undo: list[tuple[Any, str, bool, Any]] = []

    def _swap(self, obj: Any, name: str, value: Any) -> None:
        had = name in getattr(obj, "__dict__", {})
        self.undo.append((obj, name, had, obj.__dict__.get(name) if had else None))
        setattr(obj, name, value)

    def __enter__(self) -> None:
        a = self.adapter
        if getattr(a, "_ffi_callee_allocated_output_abi", False):
            raise RuntimeError("TileLang kernel allocates its outputs in compiled code: no no-op launch")
        lib = getattr(a, "lib", None)
        if lib is not None and hasattr(lib, "call"):  # cython / ctypes adapters (C target)
            self._swap(lib, "call", lambda *args: 0)
        elif hasattr(a, "_get_executable"):  # tvm_ffi adapter
            self._swap(a, "_get_executable", lambda: (lambda *args: None))
        else:
            raise RuntimeError(f"no no-op launch for TileLang adapter {type(a).__name__}")

    def __exit__(self, *exc: Any) -> None:
        for obj, name, had, old in reversed(self.undo):
            if had:
                setattr(obj, name, old)
            else:
                delattr(obj, name)


@contextmanager
def noop() -> Iterator[None]:
    """Every TileLang kernel launch does nothing: outputs the adapter allocates
    are returned unwritten, buffers passed in keep their contents."""

    def make(orig: Any) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            with _SkipCompiled(self.adapter):
                return orig(self, *args, **kwargs)
        return call

    with _patched(make):
        yield
