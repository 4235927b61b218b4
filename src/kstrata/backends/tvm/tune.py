"""MetaSchedule tuning: the parameter-level search and the tuned TVM baseline.

:func:`tune` tunes every PrimFunc of a candidate's lowered graph at one shape
with ``tvm.s_tir.meta_schedule.tune_tir`` (Shao et al., "Tensor Program
Optimization with Probabilistic Programs", NeurIPS 2022) and returns the best
traces as a ``schedule`` text (with the graph marked ``# build: static``, since
the traces were chosen at that shape).

MetaSchedule needs ``tvm.ir.save_json``: with apache-tvm 0.27.0.post1 it
segfaults (in ``ToJSONGraph``) under apache-tvm-ffi 0.1.15.post1 and
0.1.15.post2, already when a ``TuneContext`` is built, so no in-memory
database or builder choice avoids it; under apache-tvm-ffi 0.1.14.post1 it
works and tuning runs (:func:`json_serialization_works` probes it). Results are cached on disk in a JSON file per key
(task digest, graph text, shape, target, TVM version, trials), written
atomically, so each baseline is tuned once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterator
from typing import Any

from kstrata.backends.tvm.schedule import render_schedule, trace_lines
from kstrata.atomic import write_atomic
from kstrata.tasks.base import Task


@dataclass
class TuneResult:
    """Tuned sources and what it took.

    Attributes
    ----------
    sources:
        ``{"graph": ..., "schedule": ...}`` with the tuned schedule.
    records:
        Per PrimFunc: ``{"func", "run_secs": [s, ...] (best record), "trials"}``.
    key:
        The cache key; ``cached`` is True when it came from the cache.
    """

    sources: dict[str, str]
    records: list[dict[str, Any]] = field(default_factory=list)
    key: str = ""
    cached: bool = False


def _die_with(parent: int, prctl: Any) -> None:
    """(In a forked child, before exec.) Ask Linux to SIGKILL this process when
    its parent thread ends (``prctl(PR_SET_PDEATHSIG)``), and exit at once if
    the parent is already gone. ``prctl`` is libc's, looked up in the parent
    (no ``dlopen`` between fork and exec)."""
    import signal

    prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def _libc_prctl() -> Any:
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


class _PopenDiesWithParent:
    """Stands in for the ``subprocess`` module inside ``tvm.support.popen_pool``:
    its ``Popen`` starts TVM's ``popen_worker`` processes (MetaSchedule's
    builders and runners) with :func:`_die_with`, so a killed ``kstrata
    baseline`` or ``optimize`` leaves none running (issue #23). Popen workers
    are started from the pool's threads, which live until the pool shuts its
    workers down anyway."""

    def __getattr__(self, name: str) -> Any:
        import subprocess

        return getattr(subprocess, name)

    @staticmethod
    def Popen(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 - the name it replaces
        import functools
        import subprocess

        prctl = _libc_prctl()
        if prctl is not None and "preexec_fn" not in kwargs:
            kwargs["preexec_fn"] = functools.partial(_die_with, os.getpid(), prctl)
        return subprocess.Popen(*args, **kwargs)


def popen_workers_die_with_parent() -> bool:
    """Make TVM's popen workers die with the process that started them (see
    :class:`_PopenDiesWithParent`); idempotent. Returns whether TVM's popen
    pool was found and patched."""
    try:
        from tvm.support import popen_pool
    except ImportError:
        return False
    if not isinstance(getattr(popen_pool, "subprocess", None), _PopenDiesWithParent):
        popen_pool.subprocess = _PopenDiesWithParent()
    return True


@functools.cache
def json_serialization_works() -> bool:
    """Whether ``tvm.ir.save_json`` works (MetaSchedule needs it); probed in a
    subprocess because the failure is a segfault. The answer depends only on
    the installed TVM, so it is probed once per process (the probe imports TVM
    in a fresh interpreter: seconds, a minute on a loaded host)."""
    import subprocess
    import sys

    probe = "import tvm; tvm.ir.save_json(tvm.tirx.IntImm('int32', 3))"
    r = subprocess.run([sys.executable, "-P", "-c", probe], capture_output=True, timeout=120)
    return r.returncode == 0


def build_for_measurement(mod: Any, target: Any, _params: Any = None) -> Any:
    """MetaSchedule's build function here (``LocalBuilder(f_build=...)``): what
    TVM's ``default_build`` does, without its ``import tvm.s_tir.tensor_intrin``.

    That import parses every tensor intrinsic TVM ships (CUDA, x86, ARM, ...),
    hundreds of TVMScript functions, each calling ``inspect.stack()``: over 70 s
    of CPU in a fresh process (apache-tvm 0.27), and ``LocalBuilder`` starts a
    new builder process for every search iteration. The builder needs none of
    them: a tensorized candidate arrives with the intrinsic's body already in
    place (``sch.tensorize`` substitutes it in the tuning process, where
    :func:`register_tensor_intrinsics` registered them).

    Parameters
    ----------
    mod:
        The scheduled ``IRModule`` to build.
    target:
        The ``tvm.target.Target``.
    _params:
        Must be None (as for ``default_build``).

    Returns
    -------
    tvm.runtime.Module
        The built module (MetaSchedule exports it for its runner).
    """
    from tvm.driver import build as tvm_build
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

    mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    return tvm_build(mod, target=target)


#: The tensor-intrinsic modules of ``tvm.s_tir.tensor_intrin`` that MetaSchedule's
#: rules can tensorize with per target kind (llvm: x86 VNNI/AVX-512, ARM dot
#: products, RISC-V vectors); other kinds import the whole package, as TVM does.
CPU_TENSOR_INTRINSICS = ("dot_product_common", "x86", "arm_cpu", "riscv_cpu")
_INTRIN = "tvm.s_tir.tensor_intrin"


def register_tensor_intrinsics(target: Any) -> None:
    """Register the tensor intrinsics MetaSchedule can use for ``target``
    before a ``TuneContext`` is made, without TVM's import of all of them.

    ``TuneContext.__init__`` imports ``tvm.s_tir.tensor_intrin``, whose
    ``__init__`` parses every intrinsic TVM ships (CUDA WMMA/MMA, ROCm MFMA,
    Hexagon, ...), hundreds of TVMScript functions each calling
    ``inspect.stack()``: 70-100 s of CPU in a fresh process on a busy 2-core
    machine (apache-tvm 0.27), against about 1.2 s for the CPU ones an
    ``llvm`` target can use. For an ``llvm`` target the package is entered in
    ``sys.modules`` without running its ``__init__`` (so ``TuneContext``'s
    import finds it) and :data:`CPU_TENSOR_INTRINSICS` are imported from it;
    for another kind, or where the full package was imported already, the
    package is imported whole. A later import of another submodule (dlight's
    ``tensor_intrin.cuda``) still works and registers its intrinsics then.

    Parameters
    ----------
    target:
        The ``tvm.target.Target`` being tuned for.
    """
    import importlib
    import importlib.util
    import sys

    have = sys.modules.get(_INTRIN)
    if have is not None and not getattr(have, "_kstrata_partial", False):
        return  # TVM's own import ran: everything is registered
    if target.kind.name != "llvm":
        if have is not None:  # the whole package now; submodules imported already are not run again
            del sys.modules[_INTRIN]
        importlib.import_module(_INTRIN)
        return
    if have is None:
        spec = importlib.util.find_spec(_INTRIN)
        pkg = importlib.util.module_from_spec(spec)  # a package (its __path__ set), __init__ not run
        pkg._kstrata_partial = True
        sys.modules[_INTRIN] = pkg
        setattr(importlib.import_module("tvm.s_tir"), "tensor_intrin", pkg)
    for sub in CPU_TENSOR_INTRINSICS:
        importlib.import_module(f"{_INTRIN}.{sub}")


def default_cache_dir() -> Path:
    """``tvm_tune`` under kstrata's cache folder (``$KSTRATA_CACHE_DIR``, else
    ``~/.cache/kstrata``, :func:`kstrata.measure.roofline.cache_dir`; the older
    ``$KSTRATA_CACHE`` wins where set): where the built-in proposer keeps the
    schedules MetaSchedule found in its sandboxed expansions
    (:func:`kstrata.backends.tvm.isolated.schedule_expansion`). It followed
    only ``KSTRATA_CACHE``, so moving the cache left it in the home folder
    (newcomer nc12)."""
    from kstrata.measure.roofline import cache_dir

    root = os.environ.get("KSTRATA_CACHE") or str(cache_dir())
    return Path(root) / "tvm_tune"


def own_cache_dir() -> Path:
    """Where :func:`tune` keeps what it tuned itself (``default_cache_dir()/own``),
    apart from the proposer's entries. A proposer's entry holds schedule text
    that a sandboxed process sent (code that ran there chose it), and a schedule
    is Python that loading runs: an entry the proposer stored for the shipped
    graph, read by the MetaSchedule baseline under the same key, ran in the
    judge's process, unsandboxed (red-team round of 2026-12-04)."""
    return default_cache_dir() / "own"


def cache_key(task: Task, graph: str, shape: dict[str, int], target: Any, trials: int) -> str:
    """sha256 over everything that changes the tuning result."""
    import tvm

    payload = json.dumps([task.digest, graph, task.full_shape(shape), str(target), tvm.__version__,
                          trials], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]




@contextlib.contextmanager
def _output_to(path: str) -> Iterator[None]:
    """Send this process's stdout and stderr (Python and C level) to ``path``:
    MetaSchedule prints its task-scheduler tables and XGBoost iterations there,
    which would otherwise bury kstrata's own progress."""
    import logging
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    quiet = [logging.getLogger(n) for n in ("tvm.meta_schedule", "tvm.s_tir.meta_schedule")]
    levels = [lg.level for lg in quiet]
    try:
        for lg in quiet:
            lg.setLevel(logging.WARNING)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd_ in (*saved, fd):
            os.close(fd_)
        for lg, level in zip(quiet, levels):
            lg.setLevel(level)


def tune(
    task: Task,
    shape: dict[str, int],
    backend_name: str = "tvm-llvm",
    trials: int = 64,
    work_dir: str | os.PathLike[str] | None = None,
    sources: dict[str, str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> TuneResult:
    """Tune ``task`` (or ``sources``' graph) at ``shape`` with MetaSchedule.

    Parameters
    ----------
    task, shape:
        What to tune and at which shape (the tuned code is specialized to it);
        the initial graph is exported so that it lowers at ``shape``
        (:func:`kstrata.backends.tvm.lower.graph_for_shape`).
    backend_name:
        ``tvm-llvm`` here; GPU targets need their device for measurement.
    trials:
        ``max_trials_global`` over all PrimFuncs.
    work_dir:
        MetaSchedule's working directory (logs, its JSON database); a
        temporary one when None.
    sources:
        Candidate whose graph to tune (default: the initial sources).
    cache_dir:
        Where tuned results are kept (default :func:`own_cache_dir`: never
        the proposer's entries, which sandboxed code wrote).

    Raises
    ------
    kstrata.backends.tvm.lower.LoweringError
        When the graph does not lower.
    NotImplementedError
        When the task's reference does not export to TVM (no ``sources`` given).
    """
    from tvm.s_tir import meta_schedule as ms

    from kstrata.backends.registry import get_backend

    if not json_serialization_works():
        raise RuntimeError(
            "MetaSchedule cannot run with this TVM build: tvm.ir.save_json (ToJSONGraph) segfaults "
            "with apache-tvm 0.27.0.post1 + apache-tvm-ffi 0.1.15.post1/0.1.15.post2, already when a "
            "TuneContext is made; pip install 'apache-tvm-ffi==0.1.14.post1' fixes it"
        )

    popen_workers_die_with_parent()
    backend = get_backend(backend_name)
    shape = task.full_shape(shape)
    if not sources:
        # exported so that it lowers at THIS shape as it stands: a graph in which
        # torch.export baked a size in (a LayerNorm's normalized_shape) is exported
        # static at ``shape``, since the tuned text's header is edited below
        from kstrata.backends.tvm.lower import LoweringError, graph_for_shape

        try:
            graph = graph_for_shape(task, shape)
        except LoweringError as e:
            raise NotImplementedError(f"{backend.name}: {task.name} does not lower: {e}") from e
        sources = {**backend.initial_sources(task), "graph": graph}
    sources = dict(sources)
    target = backend.target()
    key = cache_key(task, sources["graph"], shape, target, trials)
    path = Path(cache_dir or own_cache_dir()) / f"{key}.json"
    if path.is_file():
        from kstrata.jsontext import loads

        try:  # a damaged or hand-edited cache file (nested past the parser's depth, wrong kinds) is tuned again
            data = loads(path.read_text())
            if isinstance(data["sources"], dict) and isinstance(data["records"], list):
                return TuneResult(dict(data["sources"]), list(data["records"]), key, cached=True)
        except (OSError, ValueError, KeyError, TypeError):
            pass

    lowered = backend.lower(task, sources, shape)
    per_func: dict[str, list[str]] = {}
    records: list[dict[str, Any]] = []
    n = max(len(lowered.funcs), 1)
    with tempfile.TemporaryDirectory(prefix="kstrata_ms_") as tmp:
        wd = str(work_dir or tmp)
        os.makedirs(wd, exist_ok=True)
        register_tensor_intrinsics(target)
        for name, func in lowered.funcs.items():
            import tvm

            mod = tvm.IRModule({"main": func})
            fwd = os.path.join(wd, name)
            budget = max(trials // n, 1)
            builder = ms.builder.LocalBuilder(max_workers=1, timeout_sec=600,  # slow on a loaded host
                                              f_build=build_for_measurement)
            with _output_to(os.path.join(wd, f"{name}.tune.log")):
                db = ms.tune_tir(mod, target, fwd, max_trials_global=budget,
                                 num_trials_per_iter=min(budget, 16), num_tuning_cores=1, seed=0,
                                 builder=builder, database="memory")
            sch = ms.tir_integration.compile_tir(db, mod, target)
            if sch is None:
                records.append({"func": name, "run_secs": [], "trials": budget})
                continue
            per_func[name] = trace_lines(sch)
            rec = db.query_tuning_record(mod, target, "main")
            secs = [float(x) for x in rec.run_secs] if rec is not None and rec.run_secs else []
            records.append({"func": name, "run_secs": secs, "trials": budget})
    schedule = render_schedule(per_func, f"MetaSchedule, {trials} trials, target {target}")
    out = dict(sources)
    out["schedule"] = schedule
    # the traces were tuned at this static shape: build specialized (per shape), not symbolic
    out["graph"] = re.sub(r"^# build:.*$", "# build: static", out["graph"], count=1, flags=re.M)
    out.pop("source", None)
    write_atomic(path, json.dumps({"sources": out, "records": records, "key": key}))
    return TuneResult(out, records, key, cached=False)
