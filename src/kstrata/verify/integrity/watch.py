"""Run-time integrity watch: replaced functions, leftover threads and calls of
the reference while candidate code runs."""

from __future__ import annotations

import functools
import importlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

#: (module, attribute names) whose objects must be the same after candidate code ran
WATCHED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("time", ("perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns",
              "process_time", "sleep")),
    ("builtins", ("isinstance", "type", "len", "max", "min", "abs", "float", "getattr", "print")),
    ("torch", ("allclose", "equal", "isclose", "isfinite", "isnan", "where", "abs", "max", "empty",
               "empty_like", "zeros", "full", "randn", "manual_seed", "set_num_threads", "no_grad",
               "rand", "randint", "sign", "roll", "Generator")),
    ("torch.Tensor", ("__eq__", "__sub__", "abs", "max", "cpu", "clone", "copy_", "double", "to",
                      "float", "fill_", "sum", "numel", "untyped_storage", "data_ptr", "__torch_function__",
                      # what the harness's freshen calls in the untimed request before a timed call: a wrapped
                      # mul_ computed the changed copy's output there (case rt49_freshen_hook_precomputes)
                      "mul_", "div_", "view", "repeat", "contiguous", "is_contiguous", "element_size",
                      "is_floating_point", "is_complex", "dim")),
    ("torch.nn.Module", ("__call__", "_call_impl", "forward", "to", "double")),
    ("torch.cuda", ("synchronize", "Event", "current_stream", "is_available")),
    ("torch.testing", ("assert_close",)),
    ("kstrata.verify.tolerance", ("compare", "agree", "dtype_bound")),
    ("kstrata.verify.runner", ("flatten", "_sync", "_poison_heap")),
    ("kstrata.tasks.inputs", ("apply_distribution",)),
    # what the candidate process's harness calls at run time (its own module's names: HARNESS_NAMES;
    # the transport, kstrata.sandbox.wire, is left to the judge: a forged reply is its to reject)
    ("kstrata.measure.freshen", ("freshen", "_apply", "_factors", "_shift")),
    ("kstrata.measure.cache_flush", ("CacheFlusher",)),
)
OPTIONAL = ("triton.testing", ("do_bench",)), ("triton.runtime.jit", ("JITFunction",))
#: Names in the candidate process's harness module (``kstrata.sandbox.child``, run as ``__main__``)
#: that its request handlers look up at run time (the handlers themselves are bound before candidate
#: code runs: ``kstrata.sandbox.child.handlers``); :meth:`RuntimeWatch.add` watches them there. A
#: wrapped ``freshen`` computed each freshened copy's output in the untimed request before its timed
#: call (red-team 2026-12-04, case rt49_freshen_hook_precomputes).
HARNESS_NAMES = ("freshen", "wire", "RedZoned", "same_values", "failure", "_flatten", "_rebase", "handlers",
                 "serve", "REDZONE_BYTES")


def _resolve(path: str) -> Any:
    if path in ("torch.Tensor", "torch.nn.Module"):
        return torch.Tensor if path == "torch.Tensor" else torch.nn.Module
    return importlib.import_module(path)


class RuntimeWatch:
    """Snapshots watched functions; tracks candidate-mode calls and threads."""

    def __init__(self) -> None:
        self.snapshot: dict[tuple[str, str], Any] = {}
        self.owners: dict[str, Any] = {}
        self.active = False
        self.reference_entered = 0
        self.new_threads: list[str] = []

    def arm(self, task: Any = None, skip: tuple[str, ...] = ()) -> None:
        """Record the watched objects (call before any candidate code runs).

        ``skip``: module prefixes not to watch (the candidate process never
        imports the judge's modules, so it does not watch them)."""
        import sys

        entries = [e for e in list(WATCHED) + [o for o in OPTIONAL if o[0] in sys.modules]
                   if not e[0].startswith(skip or ("\0",))]
        for path, names in entries:
            try:
                owner = _resolve(path)
            except ImportError:
                continue
            self.owners[path] = owner
            for n in names:
                if hasattr(owner, n):
                    self.snapshot[(path, n)] = owner.__dict__.get(n, getattr(owner, n)) \
                        if isinstance(owner, type) else getattr(owner, n)

    def add(self, path: str, owner: Any, names: tuple[str, ...]) -> None:
        """Watch ``names`` of module ``owner`` too, reported as ``path.name``
        (call before any candidate code runs; a name ``owner`` lacks is skipped)."""
        self.owners[path] = owner
        for n in names:
            if hasattr(owner, n):
                self.snapshot[(path, n)] = getattr(owner, n)

    def changed(self) -> list[str]:
        """Dotted names of watched objects that are no longer the originals."""
        out = []
        for (path, n), orig in self.snapshot.items():
            owner = self.owners[path]
            now = owner.__dict__.get(n, getattr(owner, n, None)) if isinstance(owner, type) \
                else getattr(owner, n, None)
            if now is not orig:
                out.append(f"{path}.{n}")
        return out

    def restore(self) -> None:
        """Put every watched object back (the worker stays usable)."""
        for (path, n), orig in self.snapshot.items():
            owner = self.owners[path]
            try:
                setattr(owner, n, orig)
            except (AttributeError, TypeError):
                pass

    @contextmanager
    def candidate(self, settle: bool = True) -> Iterator[None]:
        """Mark candidate code running; afterwards collect threads it left running.

        ``settle=False`` leaves the threads alive at the call's return in
        :attr:`pending` without waiting for them: the caller reads the outputs
        first, then calls :meth:`settle`, so that work a thread finishes after
        the return (a deferred write into the output) is not hidden by the
        grace period."""
        before = set(threading.enumerate())
        self.active = True
        try:
            yield
        finally:
            self.active = False
            self.pending = [t for t in threading.enumerate() if t not in before and t.is_alive()]
            self.new_threads = []
            if settle:
                self.settle()

    def settle(self, grace_s: float = 0.05) -> None:
        """Wait up to ``grace_s`` for the threads left at the call's return
        (:attr:`pending`); those still alive become :attr:`new_threads`."""
        left, self.pending = list(getattr(self, "pending", []) or []), []
        if left:
            deadline = time.monotonic() + grace_s
            for t in left:
                t.join(max(0.0, deadline - time.monotonic()))
            left = [t for t in left if t.is_alive()]
        self.new_threads = [t.name for t in left]

    def guard_reference(self, model_cls: type) -> None:
        """Wrap ``model_cls.forward`` so entering it in candidate mode is recorded."""
        original = model_cls.forward
        watch = self

        @functools.wraps(original)
        def forward(self_: Any, *args: Any, **kwargs: Any) -> Any:
            if watch.active:
                watch.reference_entered += 1
            return original(self_, *args, **kwargs)

        model_cls.forward = forward

    def verify(self, ctx: Any, public: bool) -> None:
        """Fire the run-time checks on ``ctx`` (a runner Context)."""
        changed = self.changed()
        if changed:
            self.restore()
            ctx.fire("no_runtime_patching", "candidate replaced " + ", ".join(changed[:5]), public,
                     replaced=changed)
        if self.new_threads:
            names, self.new_threads = self.new_threads, []
            ctx.fire("no_threads_left", f"threads still running after the call: {', '.join(names)}",
                     public, threads=names)
        if self.reference_entered:
            n, self.reference_entered = self.reference_entered, 0
            ctx.fire("no_reference_at_runtime", f"the reference Model.forward ran {n} time(s) "
                     "inside the candidate", public)


__all__ = ["RuntimeWatch", "WATCHED"]
