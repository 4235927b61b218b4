"""Launch hooks on Triton's JIT: count kernel launches, or turn them into no-ops.

The verifier uses them for the ``kernel_launched`` and ``kernel_does_work``
checks. Both the compiled path (``JITFunction.run``) and the interpreter
(``InterpretedFunction.run``, ``TRITON_INTERPRET=1``) are patched; autotuned
and heuristics-wrapped kernels end in one of these.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class LaunchCounter:
    """Number of kernel launches seen inside :func:`count`."""

    launches: int = 0


def _targets() -> list[type]:
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    return [JITFunction, InterpretedFunction]


@contextmanager
def _patched(make):
    classes = _targets()
    originals = [c.__dict__["run"] for c in classes]
    try:
        for c, orig in zip(classes, originals):
            c.run = make(orig)
        yield
    finally:
        for c, orig in zip(classes, originals):
            c.run = orig


@contextmanager
def count() -> Iterator[LaunchCounter]:
    """Count launches (warm-up/compile-only calls excluded)."""
    counter = LaunchCounter()

    def make(orig):
        def run(self, *args, warmup=False, **kwargs):
            if not warmup:
                counter.launches += 1
            return orig(self, *args, warmup=warmup, **kwargs)
        return run

    with _patched(make):
        yield counter


@contextmanager
def noop() -> Iterator[None]:
    """Every kernel launch does nothing (the output buffers keep their contents)."""

    def make(orig):
        def run(self, *args, **kwargs):
            return None
        return run

    with _patched(make):
        yield
