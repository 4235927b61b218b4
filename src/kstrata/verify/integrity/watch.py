"""Run-time integrity watch: replaced functions, leftover threads and calls of
the reference while candidate code runs."""

from __future__ import annotations

import builtins
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
    # every builtin function and type: the harness and its transport call them in every request and
    # between requests (int, bool, memoryview, zip, sorted, any, ...), looked up at each call (rt52)
    # (cost: changed() reads all ~265 watched names in ~130 us on this project's 2-core CPU, once per request)
    ("builtins", tuple(n for n in dir(builtins) if callable(getattr(builtins, n))
                       and (not n.startswith("_") or n in ("__import__", "__build_class__")))),
    ("torch", ("allclose", "equal", "isclose", "isfinite", "isnan", "where", "abs", "max", "empty",
               "empty_like", "zeros", "full", "randn", "manual_seed", "set_num_threads", "no_grad",
               "rand", "randint", "sign", "roll", "Generator", "view_as_real")),
    ("torch.Tensor", ("__eq__", "__sub__", "abs", "max", "cpu", "clone", "copy_", "double", "to",
                      "float", "fill_", "sum", "numel", "untyped_storage", "data_ptr", "__torch_function__",
                      # what the harness's freshen calls in the untimed request before a timed call: a wrapped
                      # mul_ computed the changed copy's output there (case rt49_freshen_hook_precomputes)
                      "mul_", "div_", "view", "repeat", "contiguous", "is_contiguous", "element_size",
                      "is_floating_point", "is_complex", "dim",
                      # what its output checks and wire.encode read a returned tensor through (rt52)
                      "detach", "stride", "as_strided", "storage_offset", "reshape", "numpy", "nan_to_num", "all",
                      "device", "dtype", "shape",
                      # the operators the freshen's factors and its integer rotation go through (rt52)
                      "__getitem__", "__setitem__", "__mul__", "__rmul__", "__add__", "__radd__", "__truediv__",
                      "__int__", "__bool__", "__ge__")),
    ("torch.nn.Module", ("__call__", "_call_impl", "forward", "to", "double")),
    # what the candidate process's harness reads a returned storage through (its held-output, kept-output
    # and alias checks compare data_ptr values): a relu returning two kept buffers in turn replaced
    # UntypedStorage.data_ptr to answer fresh numbers for them, and output_reused never fired (red-team rt52)
    ("torch.UntypedStorage", ("data_ptr", "nbytes")),
    ("torch.multiprocessing.reductions.StorageWeakRef", ("__init__", "expired")),
    ("torch.multiprocessing.reductions", ("StorageWeakRef",)),
    ("torch.cuda", ("synchronize", "Event", "current_stream", "is_available")),
    ("torch.testing", ("assert_close",)),
    ("kstrata.verify.tolerance", ("compare", "agree", "dtype_bound")),
    ("kstrata.verify.runner", ("flatten", "_sync", "_poison_heap")),
    ("kstrata.tasks.inputs", ("apply_distribution",)),
    # what the candidate process's harness calls at run time (its own module's names: HARNESS_NAMES;
    # the transport, kstrata.sandbox.wire, is left to the judge: a forged reply is its to reject)
    ("kstrata.measure.freshen", ("freshen", "_apply", "_table", "_scale", "_shift")),
    ("kstrata.measure.cache_flush", ("CacheFlusher",)),
    # what the harness's transport (kstrata.sandbox.wire) calls for every request and reply, looked up at
    # each call: a softmax that replaced os.read computed the freshened copy's output before the harness
    # blocked for the next request, while the judge flushed the cache (red-team rt52). A forged reply is
    # the judge's to reject; running code between requests is this watch's
    ("os", ("read", "readv", "write", "writev")),
    ("select", ("select", "poll")),
    ("json", ("dumps", "loads")),
    ("kstrata.sandbox.wire", ("send", "recv", "encode", "decode", "depth", "dense_strides", "_wait",
                              "_read_exact", "_read_into", "_write_all", "_LEN")),
    # the modes the harness enters in every checked call (no_grad around the call; inference_mode while it
    # poisons the previous outputs, rt56): a replaced __enter__ ran candidate code in the harness's request
    ("torch.autograd.grad_mode.no_grad", ("__enter__", "__exit__")),
    ("torch.autograd.grad_mode.inference_mode", ("__init__", "__enter__", "__exit__")),
)
OPTIONAL = ("triton.testing", ("do_bench",)), ("triton.runtime.jit", ("JITFunction",))
#: Names in the candidate process's harness module (``kstrata.sandbox.child``, run as ``__main__``)
#: that its request handlers look up at run time (the handlers themselves are bound before candidate
#: code runs: ``kstrata.sandbox.child.handlers``); :meth:`RuntimeWatch.add` watches them there. A
#: wrapped ``freshen`` computed each freshened copy's output in the untimed request before its timed
#: call (red-team 2026-12-04, case rt49_freshen_hook_precomputes).
HARNESS_NAMES = ("freshen", "wire", "RedZoned", "same_values", "failure", "_flatten", "_rebase", "handlers",
                 "serve", "REDZONE_BYTES")


#: Watched classes (their names replaced on the class itself), by dotted path.
CLASSES = {"torch.Tensor": lambda: torch.Tensor, "torch.nn.Module": lambda: torch.nn.Module,
           "torch.UntypedStorage": lambda: torch.UntypedStorage,
           "torch.multiprocessing.reductions.StorageWeakRef":
               lambda: importlib.import_module("torch.multiprocessing.reductions").StorageWeakRef,
           "torch.autograd.grad_mode.no_grad": lambda: torch.autograd.grad_mode.no_grad,
           "torch.autograd.grad_mode.inference_mode": lambda: torch.autograd.grad_mode.inference_mode}


def _resolve(path: str) -> Any:
    if path in CLASSES:
        return CLASSES[path]()
    return importlib.import_module(path)


class RuntimeWatch:
    """Snapshots watched functions; tracks candidate-mode calls and threads."""

    def __init__(self) -> None:
        self.snapshot: dict[tuple[str, str], Any] = {}
        self.owners: dict[str, Any] = {}
        self.active = False
        self.reference_entered = 0
        self.new_threads: list[str] = []
        self.hooks: Hooks | None = None

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
                    self._methods(path, n)
        self.hooks = Hooks()

    def add(self, path: str, owner: Any, names: tuple[str, ...]) -> None:
        """Watch ``names`` of module ``owner`` too, reported as ``path.name``
        (call before any candidate code runs; a name ``owner`` lacks is skipped)."""
        self.owners[path] = owner
        for n in names:
            if hasattr(owner, n):
                self.snapshot[(path, n)] = getattr(owner, n)
                self._methods(path, n)

    def _methods(self, path: str, name: str) -> None:
        """Watch the methods of a kstrata class watched as ``path.name``: the
        harness calls them at run time (a freshen's ``CacheFlusher.flush``, a
        red zone's ``zones_intact``), and a class watched by name alone kept
        its identity when the candidate replaced one of them: a replaced
        ``CacheFlusher.flush`` computed the freshened copy's softmax in the
        untimed flush request (red-team rt52)."""
        cls = self.snapshot.get((path, name))
        if not (isinstance(cls, type) and str(getattr(cls, "__module__", "")).startswith("kstrata.")):
            return
        cpath = f"{path}.{name}"
        self.owners[cpath] = cls
        for attr, value in vars(cls).items():
            if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
                self.snapshot[(cpath, attr)] = value

    def changed(self) -> list[str]:
        """Dotted names of watched objects that are no longer the originals,
        then what the candidate left intercepting the harness's own torch
        calls (:meth:`Hooks.left`)."""
        out = self.hooks.left() if self.hooks is not None else []
        for (path, n), orig in self.snapshot.items():
            owner = self.owners[path]
            now = owner.__dict__.get(n, getattr(owner, n, None)) if isinstance(owner, type) \
                else getattr(owner, n, None)
            if now is not orig:
                out.append(f"{path}.{n}")
        return out

    def restore(self) -> None:
        """Put every watched object back (the worker stays usable)."""
        if self.hooks is not None:
            self.hooks.undo()
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


class Hooks:
    """What a candidate can leave in its process, with no name replaced, that
    every later torch call of the harness there runs through: a torch
    function or dispatch mode left entered (a ``with`` block held open by a
    suspended generator), torch functions switched off, a kernel of an
    operator that existed before the candidate registered again through
    ``torch.library`` (public API), a profile or trace function; and what
    runs candidate code in the harness's thread at other moments: a signal
    handler (another of its processes, or a timer, sends the signal while the
    harness waits for the judge's next request), an interval timer, a garbage
    collector callback, a ``sys.monitoring`` tool.

    The harness freshens a reused input copy (``Tensor.mul_`` on a flat view
    of it) in an untimed request before each timed call: a TorchFunctionMode
    left entered at import, or ``aten::mul_.Tensor``'s CPU kernel replaced with
    ``torch.library.Library("aten", "IMPL")``, computed the freshened copy's
    softmax there, and the timed call returned it: correct, 2.0x-3.0x
    "faster" under the strict preset (red-team rt50). Snapshotted before any
    candidate code runs, in the thread that serves the judge (the mode stacks
    are per thread); :meth:`left` is read after each call and at each fetch of
    a timed call's outputs."""

    #: dispatch keys of a kernel registered again that change no computation (shape inference only)
    SHAPE_ONLY_KEYS = frozenset({"Meta"})

    def __init__(self) -> None:
        import sys

        C = torch._C
        self._fn_len, self._disp_len = C._len_torch_function_stack, C._len_torch_dispatch_stack
        self._fn_pop, self._disp_pop = C._pop_torch_function_stack, C._pop_torch_dispatch_stack
        self._fn_state, self._set_fn_state = C._get_torch_function_state, C._set_torch_function_state
        self._getprofile, self._gettrace = sys.getprofile, sys.gettrace
        self._setprofile, self._settrace = sys.setprofile, sys.settrace
        self.fn_modes, self.dispatch_modes, self.fn_state = self._fn_len(), self._disp_len(), self._fn_state()
        self.profile, self.trace = self._getprofile(), self._gettrace()
        library = importlib.import_module("torch.library")
        # the set torch.library adds every registration to (the object, not the name: rebinding it hides nothing)
        self.impls = library._impls
        self.impls_before = frozenset(self.impls)
        self.ops = frozenset(C._dispatch_get_all_op_names())
        import gc
        import signal

        self._getsignal, self._signal, self._getitimer, self._setitimer = (signal.getsignal, signal.signal,
                                                                           signal.getitimer, signal.setitimer)
        self.handlers = {}
        for sig in signal.valid_signals():
            try:
                self.handlers[sig] = self._getsignal(sig)
            except (OSError, ValueError):
                continue
        self.timers = {t: self._getitimer(t) for t in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF)}
        self.gc_callbacks, self.gc_before = gc.callbacks, list(gc.callbacks)
        monitoring = getattr(sys, "monitoring", None)  # Python 3.12 and later
        self._get_tool = getattr(monitoring, "get_tool", None)
        self.tools = self._monitoring()

    def _monitoring(self) -> list[Any]:
        return [self._get_tool(i) for i in range(6)] if self._get_tool is not None else []

    def overridden(self) -> list[str]:
        """``ns::op.overload (KEY)`` of every kernel registered through
        ``torch.library`` since the snapshot for an operator that existed
        then (new operators, which the PyTorch compiler defines as it first
        runs, are the candidate's own)."""
        out = []
        for entry in sorted(set(self.impls) - self.impls_before):
            ns, _, rest = entry.partition("/")
            op, _, key = rest.rpartition("/")
            if f"{ns}::{op}" in self.ops and key not in self.SHAPE_ONLY_KEYS:
                out.append(f"{ns}::{op} ({key or 'all keys'})")
        return out

    def left(self) -> list[str]:
        """What is intercepting the harness's torch calls now, one phrase each ([] for none)."""
        out = []
        n = self._fn_len() - self.fn_modes
        if n > 0:
            out.append(f"the torch function mode stack ({n} mode(s) left entered)")
        n = self._disp_len() - self.dispatch_modes
        if n > 0:
            out.append(f"the torch dispatch mode stack ({n} mode(s) left entered)")
        if self._fn_state() != self.fn_state:
            out.append("the torch function state (left switched off)")
        for what in self.overridden()[:5]:
            out.append(f"the kernel of {what} (torch.library)")
        if self._getprofile() is not self.profile:
            out.append("the profile function (sys.setprofile)")
        if self._gettrace() is not self.trace:
            out.append("the trace function (sys.settrace)")
        changed = [sig for sig, h in self.handlers.items() if self._getsignal(sig) is not h]
        if changed:
            out.append(f"the handler of signal {', '.join(str(int(s)) for s in changed[:4])} (signal.signal)")
        if any(self._getitimer(t) != v for t, v in self.timers.items()):
            out.append("an interval timer (signal.setitimer)")
        if [id(c) for c in self.gc_callbacks] != [id(c) for c in self.gc_before]:
            out.append("the garbage collector's callbacks (gc.callbacks)")
        if self._monitoring() != self.tools:
            out.append("a sys.monitoring tool")
        return out

    def undo(self) -> None:
        """Leave the modes, switch torch functions back on, put back the profile
        and trace functions, the timers, the signal handlers and the garbage
        collector's callbacks (best effort; a kernel registered again and a
        monitoring tool stay: the process is not used for a verdict again)."""
        while self._fn_len() > self.fn_modes:
            self._fn_pop()
        while self._disp_len() > self.dispatch_modes:
            self._disp_pop()
        if self._fn_state() != self.fn_state:
            self._set_fn_state(self.fn_state)
        self._setprofile(self.profile)
        self._settrace(self.trace)
        for t, v in self.timers.items():
            try:
                self._setitimer(t, *v)
            except (OSError, ValueError):
                pass
        for sig, h in self.handlers.items():
            if self._getsignal(sig) is not h and h is not None:
                try:
                    self._signal(sig, h)
                except (OSError, ValueError, TypeError):
                    pass
        self.gc_callbacks[:] = self.gc_before


__all__ = ["WATCHED", "Hooks", "RuntimeWatch"]
