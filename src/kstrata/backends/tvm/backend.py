"""The ``tvm-llvm``, ``tvm-opencl`` and ``tvm-cuda`` backends.

A candidate has three levels (see :mod:`~kstrata.backends.tvm.lower`,
:mod:`~kstrata.backends.tvm.schedule`, :mod:`~kstrata.backends.tvm.build`):

``graph``
    Relax TVMScript with a ``# kstrata-tvm graph`` header (fusion choice, param
    order). Symbolic in the input sizes, so it serves every task shape.
``schedule``
    ``def schedule_<primfunc>(sch)`` functions of ``tvm.s_tir.Schedule``
    primitives. On GPU targets a PrimFunc without one gets dlight's default
    thread binding at build time.
``source``
    The generated LLVM IR / OpenCL C / CUDA C, with header lines saying how to
    run it. When present it is what gets built. On ``tvm-llvm`` it is
    shape-generic (``shape=symbolic``: sizes come from the arguments); on
    OpenCL/CUDA, or from a graph marked ``# build: static``, it is specialized
    to one shape and refused at others (the verifier then fails it at its
    hidden shapes, so a static ``source`` edit only suits fixed-shape use).

``load`` builds the lowest level present. On ``tvm-llvm`` graph+schedule
candidates are built once with symbolic shapes and the built module is cached
in-process by (target, task, graph, schedule), so the verifier's loads at its
several shapes reuse one compile; ``# build: static`` in the graph header
(or a static-exported graph) builds per shape instead. Model weights are drawn by building
the task's ``Model(*init_inputs)`` under the caller's RNG state (as KernelBench
does) and bound as trailing kernel arguments.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

from kstrata.backends.base import Availability, Backend, CandidateLoadError
from kstrata.backends.tvm import build as tb
from kstrata.backends.tvm.lower import Lowered, LoweringError, default_graph, lower_graph, with_fusion
from kstrata.backends.tvm.poison import PoisonSwitch, check_pattern
from kstrata.backends.tvm.schedule import (
    ScheduleTextError,
    default_gpu_schedule,
    replay_with_gpu_defaults,
    render_schedule,
    replay_schedule,
    schedule_lines,
)
from kstrata.execute.cpus import allowed_cpu_count
from kstrata.tasks.base import Task, TaskError

_CACHE: OrderedDict[str, Any] = OrderedDict()
#: built modules kept in-process (a shape's normal build and two poison builds are three)
_CACHE_SIZE = 192
#: the most shapes one :meth:`TVMBackend.prepare` builds (their builds, with the poison builds, fit the cache)
PREPARE_SHAPES = 48


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@contextlib.contextmanager
def _errors_as_load_errors() -> Iterator[None]:
    try:
        yield
    except (LoweringError, ScheduleTextError, tb.BuildError, TaskError) as e:
        raise CandidateLoadError(str(e)) from e


class TVMBackend(Backend):
    """TVM on one target kind (``llvm``, ``opencl`` or ``cuda``)."""

    kind = "llvm"
    levels = ("graph", "schedule", "source")
    level_kinds = {"graph": "python-ir", "schedule": "python-ir", "source": "native"}
    #: what a schedule runs with bound (kstrata.backends.tvm.schedule._namespace)
    level_globals = {"schedule": {"tvm": "tvm", "T": "tvm.script.tirx",
                                  "unit_reductions": "kstrata.backends.tvm.schedule.unit_reductions"}}

    # ------------------------------------------------------------------ info
    def target(self) -> Any:
        """This backend's ``tvm.target.Target``."""
        return tb.make_target(self.kind)

    @property
    def gpu_like(self) -> bool:
        """Whether PrimFuncs need thread binding (OpenCL and CUDA)."""
        return self.kind in ("opencl", "cuda")

    def _versions(self) -> tuple[tuple[str, str], ...]:
        import tvm

        return (("tvm", tvm.__version__), ("torch", torch.__version__))

    def availability(self) -> Availability:
        try:
            import tvm  # noqa: F401
        except ImportError as e:
            return Availability(False, f"apache-tvm is not installed: {e}")
        return Availability(True, "", self._versions())

    # ------------------------------------------------------------------ levels
    def initial_sources(self, task: Task) -> dict[str, str]:
        """Default lowering: the exported Relax graph and an empty schedule.

        On GPU targets the graph's fusion is ``rows`` (elementwise producers
        fused into the row reductions they feed, :func:`~kstrata.backends.tvm.lower._legalize`:
        rmsnorm is one kernel, not two that write and re-read a B x D
        intermediate) and the empty schedule means "default thread binding for
        every PrimFunc" (:func:`~kstrata.backends.tvm.schedule.default_gpu_schedule`,
        applied at build time, at the build shape); use
        :meth:`materialize_schedule` for the explicit trace text.

        Raises
        ------
        NotImplementedError
            When the reference does not lower (the message says why).
        """
        try:
            graph = default_graph(task)
        except LoweringError as e:
            raise NotImplementedError(f"{self.name}: {task.name} does not lower: {e}") from e
        note = "default GPU schedule (vectorized elementwise, else dlight) for PrimFuncs listed nowhere below" \
            if self.gpu_like else "unscheduled: TVM's default loop nests"
        if self.gpu_like:
            graph = with_fusion(graph, "rows")
        return {"graph": graph, "schedule": render_schedule({}, note)}

    @property
    def symbolic_builds(self) -> bool:
        """Whether this target builds shape-generic code (llvm: TVM's runtime passes
        the sizes; the OpenCL launcher and the dlight GPU defaults need static shapes)."""
        return self.kind == "llvm"

    def wants_symbolic(self, sources: dict[str, str], task: Task) -> bool:
        """Whether ``sources`` are built once for all shapes (see :meth:`load`)."""
        from kstrata.backends.tvm.lower import parse_graph

        if not self.symbolic_builds:
            return False
        header = parse_graph(sources.get("graph") or default_graph(task))[0]
        return header.build != "static" and header.static_shape is None

    def level_context(self, task: Task, sources: dict[str, str], level: str) -> dict[str, str]:
        """For the ``schedule`` level: the PrimFuncs the graph lowers to, as
        TensorIR script (block and loop names a schedule refers to), at the
        nominal shape.

        The graph is candidate text, which kstrata's own process never parses
        (TVMScript's parser evaluates expressions): it is lowered in a sandboxed
        process (:func:`kstrata.backends.tvm.isolated.primfunc_context`). When
        that fails the text says the graph did not lower and why; never raises.
        """
        if level != "schedule":
            return {}
        from kstrata.backends.tvm.isolated import primfunc_context

        return {"schedule": primfunc_context(task, sources, self.name)}

    def level_structure(self, task: Task, sources: dict[str, str]) -> dict[str, dict[str, int]] | None:
        """Blocks and open loops of each PrimFunc the candidate's graph lowers
        to (:func:`kstrata.backends.tvm.structure.graph_structure`), from the
        same sandboxed lowering as :meth:`level_context`; ``None`` when the
        graph does not lower. The agents read it to skip a level with nothing
        to edit (:mod:`kstrata.agents.closed`)."""
        from kstrata.backends.tvm.isolated import primfunc_structure

        return primfunc_structure(task, sources, self.name)

    def lower(self, task: Task, sources: dict[str, str], shape: dict[str, int],
              symbolic: bool = False) -> Lowered:
        """The candidate's graph (or the default one) lowered at ``shape``
        (``symbolic``: kept shape-generic where possible, see :func:`lower_graph`).

        Raises
        ------
        LoweringError
        """
        return lower_graph(task, sources.get("graph") or default_graph(task), task.full_shape(shape), symbolic)

    def scheduled_funcs(
        self, task: Task, sources: dict[str, str], shape: dict[str, int], strict: bool = True,
        symbolic: bool = False,
    ) -> tuple[Lowered, dict[str, Any], list[Any], list[Any]]:
        """Lower and schedule: ``(lowered, scheduled funcs, applied steps, failed steps)``.

        On GPU targets PrimFuncs that the schedule does not name get dlight's
        default schedule.

        Raises
        ------
        LoweringError, ScheduleTextError
            ``ScheduleTextError`` only when ``strict``.
        """
        lowered = self.lower(task, sources, shape, symbolic)
        text = sources.get("schedule") or render_schedule({})
        if self.gpu_like:
            funcs, applied, failed = replay_with_gpu_defaults(lowered.funcs, text, self.target(), strict)
        else:
            funcs, applied, failed = replay_schedule(lowered.funcs, text, strict=strict)
        return lowered, funcs, applied, failed

    def materialize_schedule(self, task: Task, sources: dict[str, str], shape: dict[str, int]) -> str:
        """The schedule with every implicit (dlight default) part written out as text."""
        lowered = self.lower(task, sources, shape)
        text = sources.get("schedule") or render_schedule({})
        lines = schedule_lines(text)
        if self.gpu_like:
            rest = {n: f for n, f in lowered.funcs.items() if n not in lines}
            if rest:
                lines.update(schedule_lines(default_gpu_schedule(rest, self.target())))
        return render_schedule(lines)

    def generate_source(self, task: Task, sources: dict[str, str], shape: dict[str, int]) -> str:
        """The ``source`` level: target code plus its run header.

        On tvm-llvm with a symbolic graph the code is shape-generic (header
        ``shape=symbolic``; ``shape`` is only checked); otherwise, and with
        ``# build: static``, it is specialized to ``shape``.

        Raises
        ------
        CandidateLoadError
            When the graph or schedule does not lower/build.
        """
        shape = task.full_shape(shape)
        with _errors_as_load_errors():
            try:
                if not self.wants_symbolic(sources, task):
                    raise LoweringError("static build")
                lowered, funcs, _, _ = self.scheduled_funcs(task, sources, shape, symbolic=True)
                mod = tb.build_module(funcs, self.target())
            except (LoweringError, ScheduleTextError, tb.BuildError):
                lowered, funcs, _, _ = self.scheduled_funcs(task, sources, shape)
                mod = tb.build_module(funcs, self.target())
            launch = tb.launch_table(funcs, self.target()) if self.kind == "opencl" else None
            code = tb.generated_source(mod, self.kind)
        return tb.source_header(self.kind, None if lowered.symbolic else shape, lowered.plan, launch) + code

    # ------------------------------------------------------------------ load
    def _params(self, task: Task, shape: dict[str, int], init_inputs: list[Any]) -> dict[str, torch.Tensor]:
        module = task.load_module(shape)
        model = module.Model(*init_inputs).eval()
        out = {k: v.detach() for k, v in model.named_parameters()}
        out.update({k: v.detach() for k, v in model.named_buffers()})
        return out

    def load(
        self, task: Task, sources: dict[str, str], shape: dict[str, int], init_inputs: list[Any]
    ) -> Callable[..., Any]:
        """Build the lowest level present in ``sources`` at ``shape``.

        Raises
        ------
        CandidateLoadError
            Graph text that does not parse/lower, a schedule step that fails,
            code the compiler rejects, a ``source`` made for another shape or
            target, or (``tvm-cuda``) no GPU to run on.
        """
        shape = task.full_shape(shape)
        with _errors_as_load_errors():
            state = self._params(task, shape, init_inputs)  # first: uses the caller's RNG state
            if "source" in sources and sources["source"].strip():
                return self._load_source(task, sources, shape, state)
            if not sources.get("graph") and not sources.get("schedule"):
                raise CandidateLoadError(f"{self.name} candidate needs a graph, schedule or source level")
            lowered, built = self._built(task, sources, shape)

            def poison_built(pattern: int) -> Any:
                try:
                    with _errors_as_load_errors():
                        return self._built(task, sources, shape, poison=pattern)[1]
                except CandidateLoadError as e:
                    raise RuntimeError(f"kstrata: poison build (pattern {pattern}) failed where the "
                                       f"normal build did not: {e}") from e

            return self._runner(lowered.plan, built, self._bind(lowered.header.params, state), poison_built)

    def set_poison(self, pattern: int) -> None:
        """See :meth:`Backend.set_poison`. TVM: the plan runner fills every
        intermediate and output it allocates, and graph/schedule candidates run
        a *poison build* whose PrimFuncs fill every buffer they allocate
        (rfactor partials, cache stages, workspaces, ``local`` arrays) right
        after allocating it. With a pattern set before ``load``, ``load`` makes
        the poison builds of both patterns (lowering runs PyTorch code, which
        must not happen inside a checked call); otherwise the first call under
        a pattern makes its build. Poison builds are cached apart from the
        normal build, which stays what is timed; with pattern 0 a call costs
        one attribute read more (:mod:`kstrata.backends.tvm.poison`).

        Raises
        ------
        ValueError
            For a pattern other than 0, 1 or 2.
        """
        self.poison_switch.pattern = check_pattern(pattern)

    @property
    def poison_switch(self) -> PoisonSwitch:
        """The switch shared with every runner this backend instance made."""
        sw = self.__dict__.get("_poison_switch")
        if sw is None:
            sw = self.__dict__["_poison_switch"] = PoisonSwitch()
        return sw

    def _built(self, task: Task, sources: dict[str, str], shape: dict[str, int],
               poison: int = 0) -> tuple[Lowered, Any]:
        """(lowered, built module) for ``sources`` at ``shape``, from the in-process cache
        (``poison`` 1/2: the poison build of that pattern, cached apart).

        A shape-generic build is cached under (target, task, graph, schedule) and
        reused at every shape it fits; a static one (``# build: static``, a
        static-exported graph, a dim torch.export specialized that differs at
        this shape, a graph or schedule TVM cannot lower/build with symbolic
        shapes, or a target without symbolic builds) per shape.
        """
        graph, schedule = sources.get("graph"), sources.get("schedule")
        if self.wants_symbolic(sources, task):
            skey = _key(self.kind, task.digest, graph, schedule, "symbolic", poison)
            hit = _CACHE.get(skey)
            if hit is not None and hit[0].fits(task, shape):
                _CACHE.move_to_end(skey)
                return hit
            try:
                lowered, funcs, _, _ = self.scheduled_funcs(task, sources, shape, symbolic=True)
                entry = (lowered, self._build(funcs, poison=poison))
            except (LoweringError, ScheduleTextError, tb.BuildError):
                pass  # TVM cannot keep this graph/schedule symbolic: build it for this shape below
            else:
                self._store(skey if lowered.symbolic
                            else _key(self.kind, task.digest, graph, schedule, shape, poison), entry)
                return entry
        key = _key(self.kind, task.digest, graph, schedule, shape, poison)
        if key not in _CACHE:
            lowered, funcs, _, _ = self.scheduled_funcs(task, sources, shape)
            self._store(key, (lowered, self._build(funcs, poison=poison)))
        return _CACHE[key]

    def prepare(self, task: Task, sources: dict[str, str], shapes: list[dict[str, int]]) -> dict[str, Any]:
        """See :meth:`Backend.prepare`. TVM: for a candidate built per shape
        (every OpenCL/CUDA graph+schedule candidate; on llvm a ``# build:
        static`` one), each shape not yet in the in-process cache is lowered
        and scheduled once, here, one shape after another (Relax legalization
        is not thread-safe: two threads at once fail with "nested op_tag is
        not allowed"), and then its normal build and, with a poison pattern
        set (:meth:`set_poison`), its two poison builds are compiled in a pool
        of threads, as many as this process may use CPUs
        (:func:`kstrata.execute.cpus.allowed_cpu_count`); on CUDA each build
        runs nvcc, a subprocess. Shape-generic and ``source``-level
        candidates are built once at their first load: nothing to do.

        The builds are stored under the keys :meth:`_built` looks up; at most
        :data:`PREPARE_SHAPES` shapes are prepared (the rest build at their
        load). A shape that fails to lower or build is skipped: its load
        repeats the work and reports the error. The candidate's graph text is
        parsed here (TVMScript evaluates it), as :meth:`load` does: call it
        where a load may run.
        """
        t0 = time.perf_counter()
        done = {"built": 0, "failed": 0, "workers": 0, "seconds": 0.0}
        if (sources.get("source") or "").strip() or not (sources.get("graph") or sources.get("schedule")):
            return done
        graph, schedule = sources.get("graph"), sources.get("schedule")
        patterns = (0, 1, 2) if self.poison_switch.pattern else (0,)
        jobs: list[tuple[str, Lowered, Any, int]] = []
        seen: list[dict[str, int]] = []
        with contextlib.suppress(Exception):  # a graph that does not parse fails at each shape below
            if self.wants_symbolic(sources, task):
                return done
        for shape in shapes:
            shape = task.full_shape(shape)
            if shape in seen or len(seen) >= PREPARE_SHAPES:
                continue
            seen.append(shape)
            keys = {p: _key(self.kind, task.digest, graph, schedule, shape, p) for p in patterns}
            if all(k in _CACHE for k in keys.values()):
                continue
            try:
                lowered, funcs, _, _ = self.scheduled_funcs(task, sources, shape)
            except Exception:  # noqa: BLE001 - the load at this shape repeats it and reports it
                done["failed"] += 1
                continue
            jobs += [(k, lowered, funcs, p) for p, k in keys.items() if k not in _CACHE]
        if not jobs:
            return done
        build = self._builder()
        workers = max(1, min(len(jobs), allowed_cpu_count()))

        def one(job: tuple[str, Lowered, Any, int]) -> Any:
            try:
                return build(job[2], job[3])
            except Exception:  # noqa: BLE001 - the load at this shape repeats it and reports it
                return None

        with ThreadPoolExecutor(workers, thread_name_prefix="kstrata-prepare") as pool:
            built = list(pool.map(one, jobs))
        for (key, lowered, _, _), mod in zip(jobs, built):
            if mod is None:
                done["failed"] += 1
            else:
                self._store(key, (lowered, mod))
                done["built"] += 1
        done.update(workers=workers, seconds=time.perf_counter() - t0)
        return done

    def _builder(self) -> Callable[[dict[str, Any], int], Any]:
        """``(funcs, poison) -> built``, as :meth:`_build`, callable from several
        threads at once (what is process-wide, e.g. a poison pipeline's
        registration, is done here, before)."""
        from kstrata.backends.tvm.poison import pipeline_name

        for pattern in (1, 2):
            pipeline_name(pattern)
        return lambda funcs, poison: self._build(funcs, poison=poison)

    @staticmethod
    def _store(key: str, entry: Any) -> None:
        _CACHE[key] = entry
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)

    def _bind(self, names: tuple[str, ...], state: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        missing = [n for n in names if n not in state]
        if missing:
            raise CandidateLoadError(f"graph binds parameter {missing[0]!r}, which the Model does not have")
        return [state[n] for n in names]

    def _build(self, funcs: dict[str, Any], poison: int = 0) -> Any:
        return tb.build_module(funcs, self.target(), poison=poison)

    def _runner(self, plan: Any, built: Any, params: list[torch.Tensor],
                poison_built: Callable[[int], Any] | None = None) -> Callable[..., Any]:
        from kstrata.backends.tvm.runtime import PlanRunner

        get = None if poison_built is None else (lambda p: (lambda n, m=poison_built(p): m[n]))
        runner = PlanRunner(plan, lambda n: built[n], params, self.device, self.poison_switch, get)
        if poison_built is not None and self.poison_switch.pattern:
            for pattern in (1, 2):  # compile (and lower) now, in load, not inside a call
                runner._kernels_for(pattern)
        return runner

    def _load_source(self, task: Task, sources: dict[str, str], shape: dict[str, int],
                     state: dict[str, torch.Tensor]) -> Callable[..., Any]:
        text = sources["source"]
        kind, src_shape, plan, _ = tb.parse_source_header(text)
        if kind != self.kind:
            raise CandidateLoadError(f"source was generated for target {kind}, not {self.kind}")
        if src_shape is not None and task.full_shape(src_shape) != shape:
            raise CandidateLoadError(
                f"source-level code is specialized to shape {src_shape} and cannot run at {shape}"
            )
        header = None
        if sources.get("graph"):
            from kstrata.backends.tvm.lower import parse_graph

            header = parse_graph(sources["graph"])[0]
        names = header.params if header else tuple(state)
        params = self._bind(names, state)
        key = _key(self.kind, "source", text)
        if key not in _CACHE:
            _CACHE[key] = tb.load_llvm_ir(text)
        return self._runner(plan, _CACHE[key], params)


class TVMLLVMBackend(TVMBackend):
    """TVM on this CPU through LLVM (``tvm-llvm``)."""

    name = "tvm-llvm"
    kind = "llvm"
    device = "cpu"


class TVMOpenCLBackend(TVMBackend):
    """TVM's OpenCL C, run through pyopencl (``tvm-opencl``; PoCL on CPU here)."""

    name = "tvm-opencl"
    kind = "opencl"
    device = "cpu"

    def availability(self) -> Availability:
        base = super().availability()
        if not base.usable:
            return base
        try:
            import pyopencl as cl

            from kstrata.backends.tvm.runtime import opencl_device

            device = opencl_device()
        except Exception as e:  # noqa: BLE001 - no ICD loader / platform / working device
            return Availability(False, f"no usable OpenCL device: {e}", base.versions)
        return Availability(True, "", base.versions + (("pyopencl", cl.VERSION_TEXT), ("device", device.name)))

    def _build(self, funcs: dict[str, Any], poison: int = 0) -> Any:
        mod = tb.build_module(funcs, self.target(), poison=poison)
        return tb.generated_source(mod, "opencl"), tb.launch_table(funcs, self.target())

    def _runner(self, plan: Any, built: Any, params: list[torch.Tensor],
                poison_built: Callable[[int], Any] | None = None) -> Callable[..., Any]:
        from kstrata.backends.tvm.runtime import OpenCLRunner

        code, launch = built
        try:
            return OpenCLRunner(plan, code, launch, params, self.poison_switch, poison_built)
        except Exception as e:  # noqa: BLE001 - a compile error in the OpenCL C is data
            raise CandidateLoadError(f"OpenCL build failed: {str(e)[-1500:]}") from e

    def _load_source(self, task: Task, sources: dict[str, str], shape: dict[str, int],
                     state: dict[str, torch.Tensor]) -> Callable[..., Any]:
        text = sources["source"]
        kind, src_shape, plan, launch = tb.parse_source_header(text)
        if kind != self.kind or launch is None:
            raise CandidateLoadError(f"source was generated for target {kind}, not opencl (or lacks kstrata-launch)")
        if src_shape is None or task.full_shape(src_shape) != shape:
            raise CandidateLoadError(
                f"source-level code is specialized to shape {src_shape} and cannot run at {shape}"
            )
        from kstrata.backends.tvm.lower import parse_graph

        names = parse_graph(sources["graph"])[0].params if sources.get("graph") else tuple(state)
        return self._runner(plan, (text, launch), self._bind(names, state))


class TVMCUDABackend(TVMBackend):
    """TVM's CUDA C, compiled with nvcc, run on an NVIDIA GPU (``tvm-cuda``)."""

    name = "tvm-cuda"
    kind = "cuda"
    device = "cuda"
    #: schedule edits first: the start's graph is fused for a GPU already (graph choice ``rows``) and its
    #: schedule is dlight's default. On the H200 one schedule expansion held variants 1.05-1.40x faster
    #: than the start on rmsnorm, softmax, layernorm and fused_exp_mean
    #: (benchmarks/results/tvm_cuda_variants.txt), while rmsnorm's two graph edits, asked first, read
    #: 0.70x and 0.51x of it and used a 3-evaluation search (gpu_optimize_suite.txt, 2026-12-04)
    level_preference = ("schedule", "graph", "source")

    def availability(self) -> Availability:
        base = super().availability()
        if not base.usable:
            return base
        if not torch.cuda.is_available():
            return Availability(False, "no NVIDIA GPU visible to torch (CUDA code can still be generated"
                                " and compiled with nvcc)", base.versions)
        import tvm

        if not tvm.cuda(0).exist:
            return Availability(False, "TVM's CUDA runtime sees no GPU", base.versions)
        return Availability(True, "", base.versions + (("gpu", torch.cuda.get_device_name(0)),))

    def target(self) -> Any:
        arch = None
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability(0)
            arch = f"sm_{major}{minor}"
        return tb.make_target("cuda", arch)

    def load(self, task: Task, sources: dict[str, str], shape: dict[str, int],
             init_inputs: list[Any]) -> Callable[..., Any]:
        if not self.availability().usable:
            raise CandidateLoadError(f"tvm-cuda cannot run here: {self.availability().reason}")
        return super().load(task, sources, shape, init_inputs)

    def prepare(self, task: Task, sources: dict[str, str], shapes: list[dict[str, int]]) -> dict[str, Any]:
        """As :meth:`TVMBackend.prepare`; nothing where no GPU can run the builds
        (the load says so)."""
        if not self.availability().usable:
            return Backend.prepare(self, task, sources, shapes)
        return super().prepare(task, sources, shapes)

    def _build(self, funcs: dict[str, Any], code: str | None = None, poison: int = 0) -> Any:
        target = self.target()
        _use_nvcc(str(target.attrs.get("arch", "sm_90")), code)
        return tb.build_module(funcs, target, poison=0 if code is not None else poison)

    def _builder(self) -> Callable[[dict[str, Any], int], Any]:
        """As :meth:`TVMBackend._builder`; the nvcc callback is registered here, once
        (a registration per build from several threads would race)."""
        super()._builder()
        target = self.target()
        _use_nvcc(str(target.attrs.get("arch", "sm_90")))
        return lambda funcs, poison: tb.build_module(funcs, target, poison=poison)

    def _load_source(self, task: Task, sources: dict[str, str], shape: dict[str, int],
                     state: dict[str, torch.Tensor]) -> Callable[..., Any]:
        text = sources["source"]
        kind, src_shape, plan, _ = tb.parse_source_header(text)
        if kind != "cuda" or src_shape is None or task.full_shape(src_shape) != shape:
            raise CandidateLoadError(f"source is for {kind} at {src_shape}, not cuda at {shape}")
        if not sources.get("graph"):
            raise CandidateLoadError("a tvm-cuda source needs its graph and schedule (they give the launch"
                                     " configuration); keep kernel names and parameters unchanged")
        lowered, funcs, _, _ = self.scheduled_funcs(task, sources, shape)
        built = self._build(funcs, code=text)
        return self._runner(lowered.plan, built, self._bind(lowered.header.params, state))


_NVCC_LOCK = threading.Lock()


def _use_nvcc(arch: str, code: str | None = None) -> None:
    """Register ``tvm_callback_cuda_compile`` (what TVM's CUDA module creation
    calls with the generated CUDA C) as nvcc for ``arch``, emitting PTX;
    with ``code`` (a ``source``-level candidate) it compiles ``code`` instead
    of what TVM generated."""
    import tvm

    def compile_cuda(src: str, _target: Any = None) -> bytes:
        return tb.nvcc_compile(code if code is not None else src, arch=arch, fmt="ptx")

    with _NVCC_LOCK:
        tvm.register_global_func("tvm_callback_cuda_compile", compile_cuda, override=True)
