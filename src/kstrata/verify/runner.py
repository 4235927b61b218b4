"""The verification protocol, run inside a worker process (issue #3).

Order of a verification:

1. parse every source level (``compile_error`` on a syntax error), then the
   static integrity checks (``rejected`` before any candidate code runs);
2. public stage: ``task.small_shapes`` x public seeds x distributions, stopping
   at the first failure, which is then located (:mod:`kstrata.verify.feedback`);
3. dynamic probes on the first public shape: no-op kernel launches, new
   values in the same input buffers;
4. hidden stage: sweep shapes + secret perturbations x secret seeds x
   distributions; its failures are reported without shapes or seeds.

Each test calls candidate -> reference -> candidate on fresh copies of the
inputs (so memory the reference just freed cannot pass as output), poisons
the heap and the previous outputs with NaN before each candidate call, checks
inputs are unchanged, outputs are plain tensors that do not alias inputs, both
candidate runs agree (else a race), no thread is left running and no watched
function was replaced.
"""

from __future__ import annotations

import copy
import platform
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import torch
import torch._dynamo  # noqa: F401 - dynamo wraps torch.manual_seed on import; do it before the
# runtime watch snapshots torch, so a backend that imports torch.export is not taken for a patcher

from kstrata.backends.base import Backend, CandidateLoadError
from kstrata.backends.registry import get_backend
from kstrata.tasks.base import Task, TaskError
from kstrata.tasks.inputs import apply_distribution
from kstrata.verdict import Verdict
from kstrata.verify import feedback as fb
from kstrata.verify.integrity.ops import OpRecorder
from kstrata.verify.integrity.registry import Finding, applies, preset as get_preset
from kstrata.verify.integrity.static import native_findings, static_findings, vendor_findings
from kstrata.verify.integrity.watch import RuntimeWatch
from kstrata.verify.plan import TestCase, hidden_tests, perturbed_shapes, public_tests
from kstrata.verify.result import Evaluation
from kstrata.verify.tolerance import DTYPE_BOUNDS, Comparison, agree, compare


class Stop(Exception):
    """Ends the protocol with a verdict (internal control flow)."""

    def __init__(self, verdict: Verdict, check: str | None, message: str, **evidence: Any):
        super().__init__(message)
        self.verdict, self.check = verdict, check
        self.evidence = {"message": message, **evidence}


def flatten(out: Any) -> list[Any]:
    """Forward outputs as a flat list (a tensor, or a tuple/list of them)."""
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in flatten(x)]
    return [out]


def _to(x: Any, device: str) -> Any:
    return x.to(device) if isinstance(x, torch.Tensor) else x


def _clone(xs: list[Any]) -> list[Any]:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]


def _storages(xs: list[Any]) -> list[tuple[int, int]]:
    spans = []
    for x in xs:
        if isinstance(x, torch.Tensor) and x.numel():
            s = x.untyped_storage()
            spans.append((s.data_ptr(), s.data_ptr() + s.nbytes()))
    return spans


def _sync(device: str) -> None:
    """Device-wide synchronisation: work queued on any stream completes."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _poison_heap(likes: list[torch.Tensor], device: str) -> None:
    """Allocate and free NaN-filled blocks the size of the expected outputs, so
    an output the candidate allocates but never writes reads as NaN (caching
    allocators hand the just-freed block back)."""
    blocks = [torch.full(t.shape, float("nan"), dtype=t.dtype, device=device)
              for t in likes if isinstance(t, torch.Tensor) and t.is_floating_point()]
    del blocks


@contextmanager
def poisoned_allocations():
    """Inside the block, every ``torch.empty*`` allocation is filled with NaN
    (floating point) or the dtype's maximum (integers), so an output the
    candidate allocates but never writes cannot read as a stale correct value,
    whatever the allocator hands back. Uses PyTorch's
    ``torch.utils.deterministic.fill_uninitialized_memory``, which only acts
    while ``torch.use_deterministic_algorithms`` is on (``warn_only=True``, so
    an op without a deterministic version still runs). Both settings are
    restored on exit."""
    was_on = torch.are_deterministic_algorithms_enabled()
    was_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    was_fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*does not have a deterministic implementation.*")
            yield
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = was_fill
        torch.use_deterministic_algorithms(was_on, warn_only=was_warn)


@dataclass
class Failure:
    """One failing test with what is needed to locate it."""

    test: TestCase
    outputs: list[torch.Tensor]
    oracles: list[torch.Tensor]
    comparisons: list[Comparison]
    race: bool = False


@dataclass
class Context:
    task: Task
    backend: Backend
    backend_name: str
    sources: dict[str, str]
    actions: dict[str, str]
    watch: RuntimeWatch
    evaluation: Evaluation
    load_seconds: float = 0.0
    warnings: list[Finding] = field(default_factory=list)

    def fire(self, check: str, message: str, stage_public: bool, **evidence: Any) -> None:
        """Reject (or warn, per preset) for integrity check ``check``."""
        if not applies(check, self.backend_name):
            return
        action = self.actions.get(check, "error")
        if action == "off":
            return
        if action == "warn":
            self.warnings.append(Finding(check, message, evidence))
            return
        if not stage_public:
            evidence = {k: v for k, v in evidence.items() if k not in ("test", "shape", "seed")}
            evidence["stage"] = "hidden"
        raise Stop(Verdict.REJECTED, check, message, **evidence)


# -- one shape -----------------------------------------------------------------
class ShapeRun:
    """Reference, oracle and candidate built for one (shape, parameter seed)."""

    def __init__(self, ctx: Context, shape: dict[str, int], param_seed: int):
        self.ctx = ctx
        self.device = ctx.backend.device
        task = ctx.task
        self.model, _, init_inputs, self.module = task.instantiate(shape, param_seed)
        ctx.watch.guard_reference(type(self.model))
        self.model64 = copy.deepcopy(self.model).double()
        self.model_dev = self.model.to(self.device)
        t0 = time.perf_counter()
        torch.manual_seed(param_seed)
        try:
            with ctx.watch.candidate():
                self.cand = ctx.backend.load(task, ctx.sources, shape, _clone(init_inputs))
        except CandidateLoadError as e:
            raise Stop(Verdict.COMPILE_ERROR, "load", str(e)) from None
        except BaseException as e:  # noqa: BLE001 - a candidate bug (even SystemExit) is data
            raise Stop(Verdict.COMPILE_ERROR, "load", f"{type(e).__name__}: {e}",
                       traceback=traceback.format_exc(limit=-4)) from None
        ctx.load_seconds += time.perf_counter() - t0
        ctx.watch.verify(ctx, public=True)
        self.buffers: list[Any] | None = None
        self.prev: tuple[list[torch.Tensor], list[torch.Tensor]] | None = None
        self.last_outputs: list[torch.Tensor] = []

    def inputs(self, test: TestCase) -> list[Any]:
        torch.manual_seed(test.seed + 1)
        xs = list(self.module.get_inputs())
        return apply_distribution(xs, test.dist, test.seed, self.ctx.task.meta.dist_inputs)

    def call(self, xs: list[Any], test: TestCase, refs: list[torch.Tensor]) -> list[Any]:
        """One checked candidate call on ``xs`` (device tensors)."""
        ctx, public = self.ctx, test.public
        poisoned = set()
        for t in self.last_outputs:  # poison previous outputs (stale-buffer reuse reads NaN)
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                t.fill_(float("nan"))
                if t.numel():
                    poisoned.add(t.untyped_storage().data_ptr())
        _poison_heap(refs, self.device)
        recorder = OpRecorder() if applies("no_torch_compute", ctx.backend_name) else nullcontext()
        try:
            with ctx.watch.candidate(), recorder, poisoned_allocations():
                out = self.cand(*xs)
                _sync(self.device)
        except Stop:
            raise
        except BaseException as e:  # noqa: BLE001 - a candidate bug (even SystemExit) is data
            kind = "out of memory" if "out of memory" in str(e).lower() else "raised"
            raise Stop(Verdict.RUNTIME_ERROR, "run", f"candidate {kind}: {type(e).__name__}"
                       + (f": {e}" if public else " on a hidden test"),
                       **({"test": test.describe(), "traceback": traceback.format_exc(limit=-4)}
                          if public else {})) from None
        ctx.watch.verify(ctx, public)
        if isinstance(recorder, OpRecorder) and recorder.compute_ops():
            ops = recorder.compute_ops()
            ctx.fire("no_torch_compute", "PyTorch compute ran inside the candidate's call: "
                     + ", ".join(ops[:8]) + " (the kernel must be written in the DSL)", public,
                     ops=ops, **({"test": test.describe()} if public else {}))
        outs = flatten(out)
        for i, o in enumerate(outs):
            if (isinstance(o, torch.Tensor) and o.numel() and o.is_floating_point()
                    and o.untyped_storage().data_ptr() in poisoned and bool(torch.isnan(o).all())):
                ctx.fire("no_caching", f"output {i} is the previous call's output buffer, returned "
                         "without being written again (a result kept across calls)", public,
                         **({"test": test.describe()} if public else {}))
        self._check_outputs(outs, xs, refs, test)
        self.last_outputs = outs
        return outs

    def _check_outputs(self, outs: list[Any], xs: list[Any], refs: list[Any], test: TestCase) -> None:
        ctx, public = self.ctx, test.public
        where = {"test": test.describe()} if public else {}
        if len(outs) != len(refs):
            ctx.fire("output_type", f"returned {len(outs)} outputs, the reference returns {len(refs)}",
                     public, **where)
        in_spans = _storages(xs)
        for i, (o, r) in enumerate(zip(outs, refs)):
            if type(o) is not torch.Tensor:
                ctx.fire("output_type", f"output {i} is a {type(o).__module__}.{type(o).__qualname__}, "
                         "not a plain torch.Tensor", public, **where)
                continue
            problems = []
            if o.dtype != r.dtype:
                problems.append(f"dtype {o.dtype} (expected {r.dtype})")
            if tuple(o.shape) != tuple(r.shape):
                problems.append(f"shape {tuple(o.shape)} (expected {tuple(r.shape)})")
            if o.device.type != torch.device(self.device).type:
                problems.append(f"device {o.device} (expected {self.device})")
            if problems:
                ctx.fire("output_type", f"output {i} has " + ", ".join(problems), public, **where)
            if o.numel():
                s = o.untyped_storage()
                lo, hi = s.data_ptr(), s.data_ptr() + s.nbytes()
                if any(lo < b and a < hi for a, b in in_spans):
                    ctx.fire("no_output_alias", f"output {i} shares memory with an input", public, **where)

    def run_test(self, test: TestCase) -> Failure | None:
        """candidate -> reference -> candidate on one test; None if it passes."""
        ctx, dev, tol = self.ctx, self.device, self.ctx.task.meta.tolerance
        pristine = self.inputs(test)
        # reference first into local variables (kept alive, so its memory is not reused)
        with torch.no_grad():
            refs = [r.detach() for r in flatten(self.model_dev(*[_to(x, dev) for x in _clone(pristine)]))]
            x64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                   for x in _clone(pristine)]
            oracles = [o.detach() for o in flatten(self.model64(*x64))]
        oracles = [o if r.is_floating_point() else r.cpu() for o, r in zip(oracles, refs)]
        # same input buffers across the tests of a shape: caching by address gives stale outputs
        if self.buffers is None or any(
            isinstance(b, torch.Tensor) and b.shape != x.shape for b, x in zip(self.buffers, pristine)
        ):
            self.buffers = [_to(x, dev).clone() if isinstance(x, torch.Tensor) else x for x in pristine]
        else:
            for b, x in zip(self.buffers, pristine):
                if isinstance(b, torch.Tensor):
                    b.copy_(x)
        with torch.no_grad():
            out1 = [o.detach().cpu().clone() if isinstance(o, torch.Tensor) else o
                    for o in self.call(self.buffers, test, refs)]
            self._inputs_unchanged(pristine, test)
            del refs  # the reference output is freed *before* the second run
            refs = [r.detach() for r in flatten(self.model_dev(*[_to(x, dev) for x in _clone(pristine)]))]
            refs_cpu = [r.cpu() for r in refs]
            for b, x in zip(self.buffers, pristine):
                if isinstance(b, torch.Tensor):
                    b.copy_(x)
            out2 = [o.detach().cpu().clone() for o in self.call(self.buffers, test, refs)]
            self._inputs_unchanged(pristine, test)
        comps = [compare(c, o, r, tol) for c, o, r in zip(out1, oracles, refs_cpu)]
        race = not all(agree(a, b, r.dtype, tol) for a, b, r in zip(out1, out2, refs_cpu))
        ok = all(c.ok for c in comps) and not race
        if not ok and self.prev is not None and not all(c.ok for c in comps):
            prev_out, prev_oracle = self.prev
            same_as_before = all(a.shape == b.shape and agree(a, b, r.dtype, tol)
                                 for a, b, r in zip(out1, prev_out, refs_cpu))
            new_expected = not all(a.shape == b.shape and agree(a, b, r.dtype, tol)
                                   for a, b, r in zip(oracles, prev_oracle, refs_cpu))
            if same_as_before and new_expected:
                ctx.fire("no_caching", "new values in the same input buffers gave the previous call's "
                         "output (result cached across calls)", test.public,
                         **({"test": test.describe()} if test.public else {}))
        if ok:
            self.prev = (out1, oracles)
            return None
        if race and all(c.ok for c in comps):  # locate the run that is wrong
            comps2 = [compare(c, o, r, tol) for c, o, r in zip(out2, oracles, refs_cpu)]
            if not all(c.ok for c in comps2):
                comps, out1 = comps2, out2
        return Failure(test, out1, oracles, comps, race)

    def _inputs_unchanged(self, pristine: list[Any], test: TestCase) -> None:
        for i, (b, x) in enumerate(zip(self.buffers or [], pristine)):
            if isinstance(b, torch.Tensor) and not torch.equal(b.cpu(), x) and not (
                b.is_floating_point() and torch.equal(torch.nan_to_num(b.cpu()), torch.nan_to_num(x))
                and torch.equal(torch.isnan(b.cpu()), torch.isnan(x))
            ):
                changed = int((b.cpu() != x).sum())
                self.ctx.fire("inputs_unchanged", f"input {i} was modified by the candidate "
                              f"({changed} elements changed)", test.public,
                              **({"test": test.describe()} if test.public else {}))


# -- stages ------------------------------------------------------------------------
def _run_stage(ctx: Context, tests: list[TestCase], on_shape: Callable[[ShapeRun, TestCase], None] | None = None
               ) -> tuple[int, Failure | None, ShapeRun | None]:
    runs: dict[tuple, ShapeRun] = {}
    n = 0
    for test in tests:
        key = (test.shape, test.param_seed)
        if key not in runs:
            runs.clear()
            runs[key] = ShapeRun(ctx, test.shape_dict, test.param_seed)
            if on_shape is not None:
                on_shape(runs[key], test)
        n += 1
        failure = runs[key].run_test(test)
        if failure is not None:
            return n, failure, runs[key]
    return n, None, None


def _dynamic_probes(ctx: Context, run: ShapeRun, test: TestCase) -> None:
    """Checks that need extra calls, done once on the first public shape."""
    hooks = getattr(ctx.backend, "launch_hooks", None)
    if hooks is None or not applies("kernel_launched", ctx.backend_name):
        return
    xs = [_to(x, run.device) for x in run.inputs(test)]
    with torch.no_grad():
        refs = flatten(run.model_dev(*_clone(xs)))
        with hooks.count() as counter:
            run.call(_clone(xs), test, refs)
        if counter.launches == 0:
            ctx.fire("kernel_launched", "no DSL kernel was launched during a forward call", True,
                     test=test.describe())
        x64 = [x.double().cpu() if isinstance(x, torch.Tensor) and x.is_floating_point() else _to(x, "cpu")
               for x in xs]
        oracles = flatten(run.model64(*x64))
        try:
            with hooks.noop(), poisoned_allocations():
                outs = [o.detach().cpu() for o in flatten(run.cand(*_clone(xs)))]
                _sync(run.device)
        except Exception:  # noqa: BLE001 - failing without its kernels is fine
            return
        finally:
            ctx.watch.verify(ctx, True)
        tol = ctx.task.meta.tolerance
        if all(isinstance(o, torch.Tensor) and o.shape == g.shape and compare(o, g, r.cpu(), tol).ok
               for o, g, r in zip(outs, oracles, refs)):
            ctx.fire("kernel_does_work", "with every kernel launch replaced by a no-op the output is "
                     "still correct: the result is computed by something other than the kernel", True,
                     test=test.describe(), launches=counter.launches)


def safe_shapes(task: Task, shapes: list[dict[str, int]]) -> list[dict[str, int]]:
    """The shapes at which the reference instantiates and runs (perturbations
    that break a task constraint are dropped)."""
    out = []
    for s in shapes:
        try:
            model, inputs, _, _ = task.instantiate(s, 0)
            with torch.no_grad():
                model(*inputs)
            out.append(s)
        except Exception:  # noqa: BLE001 - an unsafe perturbation is just skipped
            continue
    return out


def versions(backend: Backend) -> dict[str, str]:
    v = {"python": platform.python_version(), "torch": torch.__version__}
    try:
        v.update(dict(backend.availability().versions))
    except Exception:  # noqa: BLE001 - versions are best effort
        pass
    return v


def tolerance_record(task: Task) -> dict[str, Any]:
    """The tolerance policy actually applied (JSON-able)."""
    tol = task.meta.tolerance.model_dump()
    dt = getattr(torch, task.meta.dtype, None)
    if isinstance(dt, torch.dtype) and dt in DTYPE_BOUNDS:
        atol, rtol = DTYPE_BOUNDS[dt]
        tol.setdefault("dtype_bound", {"atol": atol, "rtol": rtol})
    return tol


SCOPES = ("full", "small")


def run_protocol(task: Task, backend_name: str, sources: dict[str, str], secret: str,
                 preset: str = "strict", scope: str = "full") -> dict[str, Any]:
    """Verify one candidate (inside a worker); returns ``Evaluation.to_dict()``.

    Parameters
    ----------
    task:
        The task.
    backend_name:
        Registry name of the candidate's backend.
    sources:
        ``{level: text}``.
    secret:
        Per-run secret from which the hidden tests derive.
    preset:
        Integrity preset name (``strict`` or ``warn``).
    scope:
        ``"full"``: hidden shapes are the sweep plus secret perturbations;
        ``"small"``: the small shapes plus secret perturbations of them (fast).
    """
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; choose one of {SCOPES}")
    t0 = time.perf_counter()
    backend = get_backend(backend_name)
    ev = Evaluation(Verdict.CORRECT, task=task.name, backend=backend_name, preset=preset,
                    versions=versions(backend), tolerance=tolerance_record(task))
    ctx = Context(task, backend, backend_name, sources, get_preset(preset), RuntimeWatch(), ev)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    threads_before = torch.get_num_threads()
    try:
        _static_stage(ctx)
        ctx.watch.arm(task)
        # -- public stage ---------------------------------------------------------
        pub = public_tests(task)
        first: dict[str, Any] = {}

        def probe(run: ShapeRun, test: TestCase) -> None:
            if not first:
                first["done"] = True
                _dynamic_probes(ctx, run, test)

        n, failure, run = _run_stage(ctx, pub, probe)
        ev.public_tests = n
        if failure is not None:
            ev.feedback = fb.locate(ctx, failure, run, pub)
            raise _incorrect(failure, public=True)
        # -- hidden stage ---------------------------------------------------------
        base = task.small_shapes if scope == "small" else task.sweep_shapes
        extra = safe_shapes(task, perturbed_shapes(task, secret, base=base))
        hid = hidden_tests(task, secret, extra, base=base)
        n, failure, _ = _run_stage(ctx, hid)
        ev.hidden_tests = n
        if failure is not None:
            ev.feedback = [fb.item("hidden_failure", "source",
                                   "all public tests pass but a hidden test fails; the hidden set covers "
                                   "the sweep's boundary shapes (sizes 1, primes, non-multiples of any "
                                   "block size) and all input distributions")]
            raise _incorrect(failure, public=False)
        ev.evidence = {"message": f"{ev.public_tests} public and {ev.hidden_tests} hidden tests pass"}
    except Stop as s:
        ev.verdict, ev.check, ev.evidence = s.verdict, s.check, s.evidence
    except TaskError as e:
        raise RuntimeError(f"task {task.name} cannot run: {e}") from e
    finally:
        ctx.watch.restore()
        torch.set_num_threads(threads_before)
    ev.warnings = [w.to_dict() for w in ctx.warnings]
    ev.load_seconds = ctx.load_seconds
    ev.seconds = time.perf_counter() - t0
    return ev.to_dict()


def _static_stage(ctx: Context) -> None:
    meta = ctx.task.meta
    findings: list[Finding] = []
    kinds = getattr(ctx.backend, "level_kinds", {}) or {}
    for level, text in ctx.sources.items():
        kind = kinds.get(level, "python-torch" if ctx.backend_name == "pytorch" else "python-dsl")
        if kind == "data":
            continue
        if kind == "native":
            findings += native_findings(text)
            continue
        try:
            findings += static_findings(
                text, dsl=kind == "python-dsl", dtype=meta.dtype,
                allow_tf32=meta.precision.allow_tf32,
                allow_reduced_precision=meta.precision.allow_reduced_precision)
        except SyntaxError as e:
            raise Stop(Verdict.COMPILE_ERROR, "syntax", f"{level}: line {e.lineno}: {e.msg}") from None
        if kind == "python-ir":
            findings += vendor_findings(text)
    errors = []
    for f in findings:
        if not applies(f.check, ctx.backend_name) or ctx.actions.get(f.check) == "off":
            continue
        (errors if ctx.actions.get(f.check, "error") == "error" else ctx.warnings).append(f)
    if errors:
        first = errors[0]
        raise Stop(Verdict.REJECTED, first.check, f"{first.check}: {first.message}",
                   findings=[f.to_dict() for f in errors])


def _incorrect(failure: Failure, public: bool) -> Stop:
    bad = [c for c in failure.comparisons if not c.ok]
    stats = bad[0].stats if bad else {}
    check = "determinism" if failure.race and not bad else "tolerance"
    if check == "determinism":
        msg = "two runs on the same input differ beyond rounding (race)"
    else:
        msg = (f"{stats.get('wrong', '?')} of {stats.get('total', '?')} elements outside tolerance "
               f"(max error {stats.get('max_err', float('nan')):.3g})")
    if public:
        return Stop(Verdict.INCORRECT, check, msg, stage="public", test=failure.test.describe(),
                    stats=stats)
    return Stop(Verdict.INCORRECT, check, msg.split(" (max")[0] + " on a hidden test", stage="hidden")
