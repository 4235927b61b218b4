"""``kstrata export RUN --to DIR``: the best kernel of a run as an importable module.

``DIR`` becomes a Python package a model can import (the command prints
these lines with the real constructor arguments and shapes)::

    import sys; sys.path.insert(0, "path/to/parent-of-DIR")
    from DIR import KernelModule, task_module
    layer = KernelModule(1024)            # the task Model's init inputs (rmsnorm: D)
    y = layer(*task_module().get_inputs())

Shapes: a run times its candidates at one shape (``--timing-shape``), and the
speedup in ``export.json`` was measured there. ``kstrata export`` therefore
builds at that timed shape unless ``--shape`` asks for another; ``export.json``
records the shape built (``shape``, ``runs_at``), the input shapes a static
build accepts (``input_shapes``) and, with each speedup, the shape it was
measured at. A static TVM build (``# build: static``) runs only at its shape:
``KernelModule`` raises a ``ValueError`` naming that shape for other inputs.

What is written, per backend:

- ``tvm-llvm``/``tvm-cuda``: ``kernel.so`` (the compiled library, built in a
  sandboxed process by :func:`kstrata.backends.tvm.export.build_library`),
  ``plan.json`` (kernel order and buffers), ``__init__.py`` (loader and
  ``KernelModule``, which runs the kernels through
  :class:`kstrata.backends.tvm.runtime.PlanRunner`; needs kstrata and TVM).
- ``pytorch``/``triton``/``tilelang-*``: ``candidate.py`` (the candidate's
  file, as text) and ``__init__.py`` (``KernelModule`` is its ``ModelNew``).

Always: ``task.py`` (the task's reference, for its ``Model`` and
``get_init_inputs``), ``export.json`` and the candidate's level files under
``sources/``; every file mode 0644. kstrata's process writes text and bytes
only; it never imports the candidate.

Staleness: ``export.json`` records the digest of its candidate's readings in
the run's ``summary.json`` (``readings``: its speedups and whether they were
trusted), and the run lists its exports in ``RUN/exports.json``. When
``kstrata retime`` changes the run afterwards, it names the exports that are
now stale, and importing such an export warns: its candidate's own readings
changed, or (exported as the best) the run's best is another candidate now.
Re-timing another candidate leaves an export current. An export from before
``readings`` compares the whole summary's digest.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from kstrata import jsontext
from kstrata.atomic import write_atomic, write_folder
from kstrata.cli.errors import Console, OptionError, err_console, user_errors
from kstrata.measure.speedup_words import speedup_text
from kstrata.search.views import reading, shape_text
from kstrata.shellarg import arg, task_arg
from kstrata.store.artifacts import backend_extensions
from kstrata.store.run_store import StoreError, read_summary, writable

console = Console()

#: ``RUN/exports.json``: the exports made from a run (``{dir: candidate hash}``)
EXPORTS_FILE = "exports.json"

_COMMON = '''"""{title}

Exported by ``kstrata export`` from run {run} (candidate {hash}); it runs at
{runs_at}. ``KernelModule(*init_inputs)`` takes the task Model's constructor
arguments (default: ``task_module().get_init_inputs()``, at the exported
shape); ``KernelModule.from_model(model)`` takes the weights of an existing
``Model`` instance. ``export.json`` says where the speedup was measured.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shlex
import sys
import warnings
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
META = json.loads((HERE / "export.json").read_text())


def _load(name: str, path: Path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def task_module():
    """The task's reference module (``Model``, ``get_inputs``, ``get_init_inputs``),
    its size globals set to the exported shape (``META["shape"]``) when first loaded."""
    fresh = f"{{__name__}}._task" not in sys.modules
    module = _load(f"{{__name__}}._task", HERE / "task.py")
    if fresh:
        shape = META.get("shape") or {{}}
        try:  # kstrata's rebinding: tuple elements ("input_shape[0]") and globals derived from sizes too
            from kstrata.tasks.base import rebind_globals

            rebind_globals(module, (HERE / "task.py").read_text(),
                           {{k: v for k, v in shape.items() if not k.startswith("@")}}, HERE / "task.py")
        except ImportError:
            for name, value in shape.items():
                if name.isidentifier() and hasattr(module, name):
                    setattr(module, name, value)
        if any(name.startswith("@") for name in shape):  # a task with literal sizes, resized by kstrata
            from kstrata.tasks import dims

            dims.wrap_get_inputs(module, dims.split_shape(shape)[1])
    return module


def stale_reason():
    """Why this export no longer matches its run (``kstrata retime`` changed the
    run's best or timings since), or ``None``; ``None`` too when the run is gone."""
    summary = Path(META.get("run", "")) / "summary.json"
    if not summary.is_file():
        return None
    # no summary at export: the run had not ended (stopped by an error); one written since ended it, and its
    # final round may have re-timed this candidate
    if META.get("summary_sha256") and hashlib.sha256(summary.read_bytes()).hexdigest() == META["summary_sha256"]:
        return None
    try:
        now = json.loads(summary.read_text())
        best = (now.get("best") or {{}}).get("hash")
        readings = now.get("readings")
        mine = readings.get(META["candidate"]) if isinstance(readings, dict) else None
    except (OSError, ValueError, AttributeError):
        return f"run {{META['run']}}: its summary.json is damaged; `kstrata retime {{shlex.quote(META['run'])}}` writes it again"
    if META.get("chosen") == "best" and best and best != META["candidate"]:
        return (f"run {{META['run']}} was re-timed since this export: its best is now {{best[:12]}}, "
                f"not this export's {{META['candidate'][:12]}}")
    if "readings_sha256" in META and isinstance(readings, dict) and mine == META["readings_sha256"]:
        return None  # another candidate was re-timed: this one's readings are as exported
    if not META.get("summary_sha256"):
        return (f"run {{META['run']}} had not ended when this was exported and has since (its final round "
                f"re-times candidates): the speedups in export.json may be out of date")
    return f"run {{META['run']}} was re-timed since this export: the speedups in export.json may be out of date"


def in_layout(inputs):
    """``inputs`` with every tensor laid out densely in the order of dimensions
    kstrata verified this kernel on: the task's ``get_inputs()`` layout
    (``META["input_orders"]``: each input's dimensions from the largest stride
    to the smallest; row-major where none is recorded). A kernel that reads a
    view's storage in another order than it was verified on would return wrong
    values silently. A task input that was a slice with gaps is passed dense."""
    orders = META.get("input_orders") or []
    out = []
    for i, x in enumerate(inputs):
        order = orders[i] if i < len(orders) else None
        if isinstance(x, torch.Tensor):
            if order is None or len(order) != x.dim() or list(order) == list(range(x.dim())):
                x = x.contiguous()
            else:
                x = x.permute(order).contiguous().permute(sorted(range(x.dim()), key=list(order).__getitem__))
        out.append(x)
    return tuple(out)


def check_shapes(inputs):
    """Raise ``ValueError`` naming the shape this export runs at when ``inputs``
    do not have the shapes a static build was compiled for (a no-op otherwise)."""
    want = META.get("input_shapes")
    if want is None:
        return
    got = [list(x.shape) if isinstance(x, torch.Tensor) else [] for x in inputs]
    if got != want:
        raise ValueError(f"this export runs only at {{META['shape_text']}} (input shapes {{want}}), "
                         f"got input shapes {{got}}; export again at your shape: kstrata export "
                         f"{{shlex.quote(META['run'])}} --to DIR --shape {{','.join(k + '=...' for k in META['shape'])}}")


def check_dtypes(inputs):
    """Raise ``TypeError`` naming the dtype the compiled kernel takes when an
    input tensor has another (``META["input_dtypes"]``: the task's inputs)."""
    for i, (x, want) in enumerate(zip(inputs, META.get("input_dtypes") or [])):
        if want is not None and isinstance(x, torch.Tensor) and str(x.dtype).removeprefix("torch.") != want:
            raise TypeError(f"input {{i}} is {{str(x.dtype).removeprefix('torch.')}}, but this export's compiled "
                            f"kernel takes {{want}} (the task's input dtype); convert it first, "
                            f"e.g. x.to(torch.{{want}})")


_STALE = stale_reason()
if _STALE is not None:
    warnings.warn(f"{{__name__}}: {{_STALE}}; run kstrata export again", stacklevel=2)
'''

_TVM = _COMMON + '''

def load_kernel(params, device=None):
    """A callable ``(*inputs) -> output`` over the compiled kernels of ``kernel.so``,
    with ``params`` (tensors in ``META["params"]`` order) bound after the inputs."""
    import tvm

    from kstrata.backends.tvm.lower import Plan
    from kstrata.backends.tvm.runtime import PlanRunner

    lib = tvm.runtime.load_module(str(HERE / "kernel.so"))
    plan = Plan.from_json((HERE / "plan.json").read_text())
    return PlanRunner(plan, lambda name: lib[name], list(params), device or META["device"])


class KernelModule(torch.nn.Module):
    """The exported kernel as a ``torch.nn.Module`` (same ``forward`` signature as the task's Model).

    Raises ``ValueError`` from ``forward`` for inputs of another shape than a
    static build's (``META["input_shapes"]``)."""

    def __init__(self, *init_inputs, model=None):
        super().__init__()
        if model is None:
            task = task_module()
            model = task.Model(*(init_inputs or task.get_init_inputs()))
        self.model = model.eval()  # holds the weights; its forward is not used
        self._runner = None

    @classmethod
    def from_model(cls, model):
        return cls(model=model)

    def forward(self, *inputs):
        inputs = in_layout(inputs)
        check_shapes(inputs)
        check_dtypes(inputs)
        if self._runner is None:
            state = dict(self.model.named_parameters())
            state.update(dict(self.model.named_buffers()))
            self._runner = load_kernel([state[n].detach() for n in META["params"]])
        return self._runner(*inputs)
'''

_FILE = _COMMON + '''

def candidate_module():
    """The candidate's module (defines ``ModelNew``). A ``triton-interp`` export runs in
    Triton's CPU interpreter, as the run verified it: ``TRITON_INTERPRET=1`` is set
    before its kernels are defined (without it Triton looks for a GPU driver). A
    ``tilelang-*`` export runs on the target the run verified it on
    (``TILELANG_DEFAULT_TARGET``, e.g. ``c``: TileLang finds no target on a machine
    without a GPU otherwise) and needs TileLang's own environment
    (``META["python"]``, made by ``kstrata setup``), not kstrata's.

    Raises
    ------
    ImportError
        When a ``tilelang-*`` export is loaded by an interpreter without tilelang
        (the message names the interpreter to use)."""
    import os

    if META.get("backend") == "triton-interp":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    if META.get("backend", "").startswith("tilelang"):
        import importlib.util

        if importlib.util.find_spec("tilelang") is None:
            raise ImportError(
                f"{{__name__}} is a {{META['backend']}} kernel: run it with the TileLang environment's python "
                f"({{META.get('python') or '$KSTRATA_ENV_DIR/tilelang/bin/python'}}, made by `kstrata setup`; "
                f"TileLang is not installed in kstrata's own environment), not {{sys.executable}}")
        if META.get("target"):  # as kstrata's worker does (kstrata.backends.tilelang.backend)
            os.environ["TILELANG_DEFAULT_TARGET"] = META["target"]
    return _load(f"{{__name__}}._candidate", HERE / "candidate.py")


class KernelModule(torch.nn.Module):
    """The exported kernel as a ``torch.nn.Module`` wrapping the candidate's ``ModelNew``."""

    def __init__(self, *init_inputs, model=None):
        super().__init__()
        if model is None:
            init_inputs = init_inputs or task_module().get_init_inputs()
            self.impl = candidate_module().ModelNew(*init_inputs)
        else:
            task = task_module()
            self.impl = candidate_module().ModelNew(*task.get_init_inputs())
            self.impl.load_state_dict(model.state_dict())

    @classmethod
    def from_model(cls, model):
        return cls(model=model)

    def forward(self, *inputs):
        return self.impl(*in_layout(inputs))
'''


def nothing_correct(tree: Any, info: Any, what: str = "export") -> str:
    """Why a run with no correct candidate cannot be exported (``what``: or
    re-timed, ``"re-time"``), and what to do:
    where a candidate failed, the commands that show why; where one was never
    evaluated (a run stopped during its first verification, newcomer nc21),
    the command that resumes the run. ``tree`` is the run's
    :class:`~kstrata.search.tree.CandidateTree`, ``info`` its
    :class:`~kstrata.cli.retime.RunInfo`."""
    from kstrata.shellarg import resume_command

    run = arg(info.run_dir)
    failed = [n for n in tree if n.evaluated]
    pending = tree.pending()
    text = f"{info.run_dir} has no correct candidate to {what}"
    if failed:
        text += (f"; {len(failed)} failed: `kstrata tree {run}` lists the verdicts and `kstrata show {run} "
                 f"{failed[0].hash[:12]}` says where it failed")
    if pending:
        text += (f"; {len(pending)} {'was' if len(pending) == 1 else 'were'} never evaluated (the run stopped "
                 f"first): continue the run with: {resume_command(info.task, info.backend.name, info.run_dir)}")
    return text


def _export_shape(option: str, info: Any) -> dict[str, int]:
    """``--shape``: ``timed`` (the run's timing shape; nominal for a run without
    one), ``nominal``, ``fit`` or ``NAME=INT,...``, completed to a full shape
    (by ``NAME=INT``'s omitted variables at the timed shape, not the nominal one:
    ``--shape B=7`` changes B only)."""
    from kstrata.tasks.scaling import ShapeFitError, parse_shape_option

    if option.strip() == "timed":
        return info.task.full_shape(info.shape)
    try:
        return parse_shape_option(option, info.task, rest=info.task.full_shape(info.shape))
    except (ValueError, ShapeFitError) as e:
        raise OptionError(f"--shape: {e}") from None


def _with_size_names(plan_json: str, task: Any, shape: dict[str, int]) -> str:
    """``plan_json`` (a symbolic TVM build's :class:`kstrata.backends.tvm.lower.Plan`)
    with ``names``: the task's size variable of each input symbol, found by
    drawing the task's inputs on PyTorch's meta device at ``shape`` with each
    variable set to a distinct prime, so that a call at the wrong size names
    ``D`` rather than the graph's ``s27`` (newcomer nc15). Unchanged when the
    task does not draw at those sizes (task code only, never a candidate's)."""
    from kstrata.tasks.signature import call_signature

    plan = json.loads(plan_json)
    sizes = sorted(k for k in shape if not k.startswith("@"))
    primes = (97, 89, 83, 79, 73, 71, 67, 61, 59, 53, 47, 43, 41, 37, 31, 29)
    if not plan.get("syms") or len(sizes) > len(primes):
        return plan_json
    probe = {**shape, **dict(zip(sizes, primes))}
    try:
        _, shapes = call_signature(task, probe)
    except Exception:  # noqa: BLE001 - a task with constraints between its sizes keeps the plain message
        return plan_json
    var_of = {probe[k]: k for k in sizes}
    names: dict[str, str] = {}
    for idx, dim, sym in plan["syms"]:
        dims = shapes[idx] if idx < len(shapes) else None
        if dims and dim < len(dims) and dims[dim] in var_of:
            names.setdefault(sym, var_of[dims[dim]])
    return json.dumps({**plan, "names": names}, separators=(",", ":")) if names else plan_json


def _summary_digest(run_dir: Path) -> str | None:
    path = run_dir / "summary.json"
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _readings_digest(run_dir: Path, candidate: str) -> tuple[bool, str | None]:
    """``(known, digest)``: whether the run's ``summary.json`` has a
    ``readings`` map (a run from before it has none) and ``candidate``'s
    digest there (``None``: never timed)."""
    try:
        readings = (read_summary(run_dir) or {}).get("readings")
    except StoreError:
        return False, None
    if not isinstance(readings, dict):
        return False, None
    digest = readings.get(candidate)
    return True, digest if isinstance(digest, str) else None


def _exported(to: Path) -> tuple[str, str] | None:
    """``(run, candidate)`` of the export in ``to``, or None (none, or unreadable)."""
    try:
        meta = jsontext.loads((Path(to) / "export.json").read_text())
        return str(meta.get("run", "")), str(meta.get("candidate", ""))
    except (OSError, ValueError, AttributeError):
        return None


def timed_out_confirmation(node: Any) -> bool:
    """Whether ``node``'s stored verdict is a ``timeout`` of a full-scope
    confirmation (``evidence["confirmation"]``) that replaced a passing
    screening verdict: runs before newcomer nc24's fix stored it so, for good;
    such a candidate is verified again rather than refused."""
    ev = node.record.evaluation
    return node.verdict == "timeout" and isinstance(getattr(ev, "evidence", None), dict) \
        and "confirmation" in ev.evidence


def confirm_for_export(info: Any, digest: str, on_start: Callable[[str], None] | None = None,
                       timeout_s: float | None = None, again: str = "") -> None:
    """Verify candidate ``digest`` of the run ``info`` (:func:`kstrata.cli.retime.open_run`)
    at the full scope when the search verified it at a reduced scope only
    (:attr:`kstrata.search.tree.Node.reduced_scope`), and store that verdict
    (``evidence["confirmation"] = "kstrata export"``), rewriting ``best/`` and
    the summary when the run's best changed. A package must not hold a kernel
    wrong at shapes its tests never ran (newcomer nc18: a row-tail bug at
    B=127 passed the screening of a run where nothing ranked, and was
    exported as "verified at the task's test shapes").

    Called by :func:`export_run` for such a candidate only. A read-only run
    (a mount kstrata cannot write) is verified all the same, its record
    unchanged. ``on_start`` is called with a line saying what is verified,
    before it starts, with the interpreter's estimate of its time where that
    is long (:func:`kstrata.verify.interp_cost.slow_note`), and then with a
    status line at least every 30 s while it runs (:class:`kstrata.cli.progress.Heartbeat`;
    newcomer nc24: 10.5 silent minutes). ``timeout_s`` is the candidate's
    time limit (s) there (None: the verifier's 600 s). ``again`` is the
    export command, said with a longer ``--timeout`` when the verification
    timed out.

    A ``timeout`` there is not stored as the candidate's verdict
    (:func:`kstrata.search.loop.confirm_one`): it stays verified at the
    reduced scope only, and the export can be tried again.

    Raises
    ------
    OptionError
        When the candidate fails the full scope (its verdict and message), its
        verification timed out (what to do), or another kstrata process holds
        the run.
    """
    from kstrata.backends.workers import pool_for
    from kstrata.search.evaluators import VerifyMeasureEvaluator
    from kstrata.search.loop import confirm_one, confirmation_record, write_outcome
    from kstrata.search.tree import CandidateTree
    from kstrata.store.lock import check_free, run_lock
    from kstrata.store.run_store import RunStore, StoreError
    from kstrata.store.secret import run_secret

    writable = os.access(info.run_dir, os.W_OK) and os.access(info.run_dir / "run.db", os.W_OK)
    if writable:
        try:
            check_free(info.run_dir, "kstrata export")
        except StoreError as e:
            raise OptionError(str(e)) from None
    from kstrata.verify.api import DEFAULT_TIMEOUT_S
    from kstrata.verify.interp_cost import slow_note

    limit = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    try:  # before any word of a verification: a run without its secret is refused (newcomer nc26)
        secret = run_secret(info.run_dir)
    except StoreError as e:
        raise OptionError(str(e)) from None
    beat = None
    if on_start is not None:
        from rich.text import Text

        from kstrata.cli import progress

        on_start(f"verifying {digest[:12]} at the full scope first (the search verified it at a reduced scope "
                 "only) ...")
        note = slow_note(info.task, info.backend, "full", limit, what="this full-scope verification",
                         scope_option=None)
        if note:
            on_start(f"estimate: {note}")
        beat = progress.Heartbeat(Text(""), on_start, quiet_s=progress.QUIET_S, max_quiet_s=progress.QUIET_S,
                                  backend=info.backend.name)
    pool = pool_for(info.backend)
    evaluator = VerifyMeasureEvaluator(secret=secret, baselines=info.baselines,
                                       shape=info.shape, pool=pool, confirm_timeout_s=timeout_s)
    try:
        if beat is not None:
            beat.__enter__()
            beat.begin(f"verifying {digest[:12]} at the full scope")
        if not writable:  # a read-only run (README): verified all the same, its verdict not stored
            with RunStore.open(info.run_dir) as store:
                sources = store.sources(digest)
            rec = confirmation_record(evaluator.confirm_promoted, info.task, info.backend, sources, "kstrata export")
        else:
            with run_lock(info.run_dir, "kstrata export"), RunStore.open(info.run_dir) as store:
                def reload() -> CandidateTree:
                    return CandidateTree.from_store(store, with_sources=False)

                best_before = reload().best_correct()
                rec = confirm_one(store, digest, info.task, info.backend, evaluator.confirm_promoted,
                                  "kstrata export")
                tree = reload()
                best_now = tree.best_correct()
                if best_before is not None and (best_now is None or best_now.hash != best_before.hash):
                    write_outcome(store, tree, info.stop_reason, backend_extensions(info.backend))
    finally:
        if beat is not None:
            beat.__exit__(None, None, None)
        pool.close()
    if rec is not None and rec.verdict == "timeout":
        raise OptionError(timed_out_text(info, digest, rec, limit, again))
    if rec is not None and rec.verdict != "correct":
        why = str((rec.evidence or {}).get("message", "") if isinstance(rec.evidence, dict) else "").strip()
        first = why.splitlines()[0] if why else ""
        kept = (f"the run now records that verdict: `kstrata show {arg(info.run_dir)} {digest[:12]}` says where it "
                "fails" if writable else "the run is read-only, so its record is unchanged")
        raise OptionError(f"candidate {digest[:12]} passed the search's reduced scope but is {rec.verdict} at the "
                          f"full scope{': ' + first if first else ''}; nothing exported ({kept})")


def edited_warning(info: Any, digest: str, best: bool) -> str | None:
    """When the run's copy of candidate ``digest`` (``best/`` when ``best``, else
    ``candidates/<hash>/``) differs from what the run stored: which files, that
    the stored candidate is what is exported, and how to use the edit
    (:func:`kstrata.store.edited.edited_copy`; newcomer nc24: an edited
    ``best/graph.py`` was ignored silently); else None."""
    from kstrata.store.edited import edited_copy

    folder = info.run_dir / "best" if best else info.run_dir / "candidates" / digest
    e = edited_copy(folder, backend_extensions(info.backend))
    if e is None or e.digest != digest:
        return None
    task = task_arg(info.task)
    return (f"{e.names()} {e.differ()} from candidate {digest[:12]} as the run stored it; the export is built from "
            f"the stored candidate, not from the edited files. To use the edit, check it (kstrata eval {task} "
            f"{arg(e.folder)}) and start a run from it (kstrata optimize {task} --backend {info.backend.name} "
            f"--initial {arg(e.folder)}), then export that run")


def timed_out_text(info: Any, digest: str, rec: Any, limit: float, again: str) -> str:
    """Why ``kstrata export`` exported nothing when the full-scope verification of
    candidate ``digest`` ended in ``timeout`` (``rec``) under a ``limit`` of
    seconds, and what to do: ``again`` (the export command) with a longer
    ``--timeout``, a quieter machine, or ``kstrata eval --scope full``."""
    why = str((rec.evidence or {}).get("message", "") if isinstance(rec.evidence, dict) else "").strip()
    first = why.splitlines()[0] if why else ""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    busy = f" (load now {load:.1f} on {os.cpu_count()} CPUs)" if load is not None else ""
    longer = int(max(2 * limit, limit + 600))
    cmd = f"{again} --timeout {longer}" if again else f"kstrata export {arg(info.run_dir)} --to DIR --timeout {longer}"
    where = info.run_dir / "candidates" / digest
    check = (f"kstrata eval {task_arg(info.task)} {arg(where)} --backend {info.backend.name} --scope full "
             f"--timeout {longer}") if getattr(info.task, "path", None) else ""
    return (f"candidate {digest[:12]} passed the search's reduced scope, but its full-scope verification did not "
            f"finish within the {limit:g} s limit{': ' + first if first else ''}. A timeout is not a wrong answer, "
            "so the run does not hold it against the candidate (a later export verifies it again), but nothing was "
            "exported. Try again "
            f"when the machine is quieter{busy}, or with more time: {cmd}"
            + (f"; to check it alone: {check}" if check else ""))


def export_run(run_dir: str | Path, to: str | Path, candidate: str | None = None, shape: str = "timed",
               unranked: bool = False, on_confirm: Callable[[str], None] | None = None,
               timeout_s: float | None = None, on_warning: Callable[[str], None] | None = None) -> Path:
    """Write the best candidate of ``run_dir`` (or ``candidate``, a hash prefix)
    into ``to`` as an importable package (see the module docstring).

    Parameters
    ----------
    shape:
        Where a static TVM build is built: ``timed`` (the run's timing shape,
        where ``export.json``'s speedup was measured), ``nominal``, ``fit``
        or ``NAME=INT,...``. A shape-generic build and a Python candidate run
        at every shape; ``shape`` then only sets the task module's globals.
    unranked:
        Export the run's best even when nothing was ranked (every timing
        untrusted: the best is only a correct fallback, not known to be
        faster than the baseline), or a named ``candidate`` whose timing was
        not trusted. Without it either is refused, naming ``kstrata retime``
        (a noisy reading of 2.5x is no more a result when the candidate is
        named); with it, ``export.json`` and the usage hint say so.
    on_confirm:
        Called with one line before a candidate the search verified at a
        reduced scope only is verified at the full scope
        (:func:`confirm_for_export`; one that fails there is not exported),
        and with its status lines while that runs.
    timeout_s:
        The candidate's time limit (s) in that verification (None: 600 s).
    on_warning:
        Called with a warning when the run's copy of the exported candidate
        (``best/`` or ``candidates/<hash>/``) was edited after the run stored
        it: the stored candidate is exported, not the edit (:func:`edited_warning`).

    Returns
    -------
    Path
        ``to``.

    Raises
    ------
    kstrata.store.StoreError
        If ``run_dir`` holds no run or ``candidate`` matches none or several.
    OptionError
        If the run has no correct candidate, the named one is not correct,
        nothing was ranked (or the named one is not ranked) and ``unranked``
        is not set, ``to`` is a non-empty
        directory that is not an earlier export, the
        shape is malformed, or the backend has nothing to export.
    kstrata.sandbox.IsolatedCallError
        If the sandboxed TVM build fails.
    """
    from kstrata.cli.retime import open_run
    from kstrata.search.tree import CandidateTree
    from kstrata.store import artifacts
    from kstrata.store.run_store import RunStore

    to = Path(to)
    if to.exists() and not to.is_dir():
        raise OptionError(f"--to {to}: a file, not a directory; give a new or empty directory for the package")
    if not to.resolve().name.isidentifier():  # newcomer nc17: `from gelu pkg import ...` was printed
        fixed = "".join(c if c.isalnum() or c == "_" else "_" for c in to.resolve().name) or "kernel"
        fixed = fixed if fixed.isidentifier() else f"k_{fixed}"
        raise OptionError(f"--to {to}: the package is imported by its folder's name, and "
                          f"{to.resolve().name!r} is not a Python identifier; name it e.g. "
                          f"{arg(str(to.parent / fixed))}")
    _check_writable(to)
    info = open_run(run_dir)
    run_abs = info.run_dir.resolve()
    if to.exists() and any(to.iterdir()) and not (to / "export.json").is_file():
        raise OptionError(f"--to {to}: a non-empty directory that is not a kstrata export; choose another")
    with RunStore.open(info.run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
        if candidate is not None:
            node = tree[store.resolve(candidate)]
            if not node.correct and not timed_out_confirmation(node):
                raise OptionError(f"candidate {node.hash[:12]} is {node.verdict or 'not evaluated'}; export a correct one "
                                  f"(`kstrata tree {arg(info.run_dir)}` lists the verdicts)")
            if not node.timing_trusted and not unranked:
                raise OptionError(
                    f"candidate {node.hash[:12]} is not ranked (its timing was not trusted), so it is not known to be "
                    f"faster than {info.baselines[0]}, whatever it read; re-time it on a quieter machine first "
                    f"(kstrata retime {arg(info.run_dir)} {node.hash[:12]}), then export; --unranked exports it anyway")
        else:
            node = tree.best_correct()
            if node is None:
                raise OptionError(nothing_correct(tree, info))
            if not node.timing_trusted and not unranked:
                raise OptionError(
                    f"{info.run_dir}: nothing was ranked (no correct candidate's timing could be trusted), so its "
                    f"best, {node.hash[:12]}, is not known to be faster than {info.baselines[0]}; re-time the run on "
                    f"a quieter machine first (kstrata retime {arg(info.run_dir)}), then export; --unranked exports "
                    f"{node.hash[:12]} anyway")
        sources = store.sources(node.hash)
    said = edited_warning(info, node.hash, candidate is None)
    if said and on_warning is not None:
        on_warning(said)
    if node.reduced_scope or timed_out_confirmation(node):  # verified at the full scope first; one that fails
        again = " ".join(["kstrata export", arg(run_dir), "--to", arg(to)]  # there is not exported
                         + (["--candidate", node.hash[:12]] if candidate is not None else [])
                         + (["--unranked"] if unranked else []) + ([] if shape == "timed" else ["--shape", arg(shape)]))
        confirm_for_export(info, node.hash, on_confirm, timeout_s, again)
    full = _export_shape(shape, info)
    timed = info.task.full_shape(info.shape)
    from kstrata.tasks.signature import call_signature

    init, input_shapes = call_signature(info.task, full)
    from kstrata.tasks.signature import input_dtypes, input_orders
    name, b = info.backend.name, info.backend
    speedups = [dict(s.__dict__, shape=timed) for s in node.measurement.speedups] if node.measurement else []
    has_readings, my_readings = _readings_digest(info.run_dir, node.hash)
    meta: dict[str, Any] = {
        "task": info.task.name, "backend": name, "candidate": node.hash, "run": str(run_abs),
        "chosen": "best" if candidate is None else "named", "device": b.device,
        "shape": full, "shape_text": shape_text(full), "timed_shape": timed,
        "speedups": speedups, "timing_trusted": node.timing_trusted,
        # which of the run's timings the speedups are (as tree, show and the summary say it)
        "reading": None if reading(node) is None else reading(node).which,
        # literal constructor arguments for the usage hint (None: not literals, e.g. tensors)
        "init_inputs": [repr(x) for x in init] if all(isinstance(x, (bool, int, float, str)) for x in init)
        else None,
        "summary_sha256": _summary_digest(info.run_dir),
        # the candidate's own readings in summary.json (kstrata.search.tree.CandidateTree.readings)
        **({"readings_sha256": my_readings} if has_readings else {}),
        # the layout the candidate was verified on (KernelModule lays its inputs out so)
        "input_orders": input_orders(info.task, full),
    }
    if full != timed and speedups:
        meta["speedup_note"] = (f"measured at {shape_text(timed)}, not at the exported shape "
                                f"{shape_text(full)}; export with --shape timed to get the measured build")
    files: dict[str, str | bytes] = {"task.py": info.task.source}
    ext = backend_extensions(b)
    for level, text in sources.items():
        files[f"sources/{artifacts.source_name(level, ext)}"] = text
    if name.startswith("tvm-"):
        from kstrata.backends.tvm.export import build_library

        try:
            built = build_library(info.task, sources, name, full)
        except ValueError as e:
            raise OptionError(str(e)) from None
        files["kernel.so"], files["plan.json"] = built["library"], _with_size_names(built["plan"], info.task, full)
        meta.update(params=built["params"], symbolic=built["symbolic"], input_dtypes=input_dtypes(info.task, full))
        if built["symbolic"]:
            meta["runs_at"] = f"every shape (a shape-generic build, built at {shape_text(full)})"
        else:
            meta["input_shapes"] = [s or [] for s in input_shapes]
            meta["runs_at"] = (f"{shape_text(full)} only (a static build; other input shapes raise ValueError; "
                               "`kstrata export --shape` builds another)")
        template = _TVM
    elif "source" in sources:
        text = sources["source"]
        if name.startswith("tilelang"):
            from kstrata.backends import envs
            from kstrata.backends.tilelang.backend import compose_source

            text = compose_source(sources)
            meta["target"] = b.target  # the target kstrata verified it on; the export sets it the same way
            meta["python"] = str(envs.env_python(envs.spec_for_backend(name).name))
        files["candidate.py"] = text
        meta["runs_at"] = (f"the shapes its ModelNew handles (verified at the task's test shapes; "
                           f"the task module's globals are set to {shape_text(full)})")
        template = _FILE
    else:
        raise OptionError(f"nothing to export for backend {name} (no source level)")
    files["__init__.py"] = template.format(title=f"{info.task.name} on {name}: the kernel kstrata exported",
                                           run=run_abs, hash=node.hash[:12], runs_at=meta["runs_at"])
    files["export.json"] = json.dumps(meta, indent=2, default=str) + "\n"
    write_folder(to, files)  # all or nothing (a full disk leaves no half package)
    _record_export(info.run_dir, to, node.hash)
    return to


def _check_writable(to: Path) -> None:
    """Refuse a ``--to`` whose folder cannot be made or written, before the run is read (newcomer nc16:
    ``--to /proc/foo`` printed a raw "[Errno 2] No such file or directory").

    Raises
    ------
    OptionError
        Naming the folder, the system's reason and what to give instead.
    """
    import errno as errno_codes

    parent = next((p for p in [to, *to.parents] if p.exists()), Path("."))
    why = None
    if not parent.is_dir():
        why = f"{parent} is a file"
    else:
        try:  # a folder made and removed in the nearest existing one (root passes os.access); nothing stays
            os.rmdir(tempfile.mkdtemp(prefix=f".{to.name}.", suffix=".probe", dir=parent))
        except OSError as e:
            why = f"{parent}: {e.strerror or errno_codes.errorcode.get(e.errno, e)}"
    if why is not None:
        raise OptionError(f"--to {to}: the package folder cannot be made there ({why}); give a directory you "
                          "can write, e.g. a new folder under the current one")


def _known_exports(path: Path) -> dict[str, str]:
    """``RUN/exports.json``: export folder -> candidate hash; ``{}`` where it is
    missing or not such an object (run-folder data anyone could have edited: a
    JSON list there ended ``kstrata export`` and ``retime`` in an
    AttributeError/TypeError traceback; red team rt62), entries of other kinds
    left out."""
    try:
        known = jsontext.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {k: v for k, v in known.items() if isinstance(k, str) and isinstance(v, str)}


def _record_export(run_dir: Path, to: Path, digest: str) -> None:
    """Add ``to`` to ``RUN/exports.json`` (so ``kstrata retime`` can name stale exports)."""
    if not writable(run_dir):  # a read-only run (newcomer nc16): the export stands, only its note is not kept
        return
    path = run_dir / EXPORTS_FILE
    known = _known_exports(path)
    known[str(to.resolve())] = digest
    write_atomic(path, json.dumps(known, indent=2, sort_keys=True) + "\n")


def stale_exports(run_dir: str | Path) -> list[str]:
    """Exports of ``run_dir`` (``RUN/exports.json``) that no longer match the
    run's ``summary.json`` (re-timed since): one line each, naming the
    directory and what changed. Exports that are gone or were overwritten by
    another run's are skipped."""
    run_dir = Path(run_dir)
    path = run_dir / EXPORTS_FILE
    known = _known_exports(path)
    digest = _summary_digest(run_dir)
    try:
        best = (read_summary(run_dir) or {}).get("best") or {} if digest else {}
    except StoreError:
        return []
    out = []
    for where, cand in sorted(known.items()):
        try:
            meta = jsontext.loads((Path(where) / "export.json").read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict):  # a hand-edited export.json (a list): not this run's export
            continue
        if meta.get("candidate") != cand or Path(meta.get("run", "")) != run_dir.resolve():
            continue
        if meta.get("summary_sha256") == digest:
            continue
        known_now, mine = _readings_digest(run_dir, cand)
        current = "readings_sha256" in meta and known_now and meta["readings_sha256"] == mine
        if meta.get("chosen") == "best" and best.get("hash") not in (None, cand):
            out.append(f"{where}: holds {cand[:12]}, but the run's best is now {best['hash'][:12]}")
        elif not current:  # another candidate re-timed leaves this one's readings, and the export, current
            out.append(f"{where}: {cand[:12]}'s speedups changed since the export")
    return out


def usage_hint(to: Path) -> str:
    """What ``kstrata export`` prints: where the kernel runs, the speedup with
    the shape it was measured at, and a script with the real constructor."""
    meta = json.loads((to / "export.json").read_text())
    lines = [f"exported candidate {meta['candidate'][:12]} of {meta['task']} ({meta['backend']}) to {to}",
             f"runs at: {meta['runs_at']}"]
    if not meta.get("timing_trusted", True):
        lines.insert(0, f"warning: {meta['candidate'][:12]} is not ranked: its timing was not trusted, so it is "
                        f"not known to be faster than the baseline; `kstrata retime {arg(meta['run'])}` on a quieter "
                        "machine re-times it")
    for s in meta.get("speedups", []):
        which = meta.get("reading")
        said = [f"the run's {which}" + (" reading" if which == "re-timed" else "")] if which else []
        said += [] if meta.get("timing_trusted", True) else ["timing not trusted; see kstrata retime"]
        lines.append(f"speedup vs {s['baseline']}: {speedup_text(s['value'], s.get('ci_low'), s.get('ci_high'))}, "
                     f"measured at {shape_text(s['shape'])}"
                     + (f" ({'; '.join(said)})" if said else ""))
    if not meta.get("speedups"):  # triton-interp times nothing (nc14: an exported run said nothing of speed)
        lines.append(f"speed: unknown: {meta['candidate'][:12]} was verified correct but never timed "
                     f"({meta['backend']} times nothing: an interpreter, or no timing was run); the compiled "
                     "backend (e.g. triton on a GPU) measures it")
    if meta.get("speedup_note"):
        lines.append(f"note: the speedup was {meta['speedup_note']}")
    init = "*task_module().get_init_inputs()" if meta.get("init_inputs") is None else ", ".join(meta["init_inputs"])
    parent = str(to.resolve().parent)
    python = "python"
    if meta.get("python"):  # tilelang-*: TileLang lives in its own environment, not kstrata's
        python = shlex.quote(meta["python"])
        lines.append(f"python: {meta['backend']} kernels run in TileLang's environment (made by `kstrata setup`; "
                     f"kstrata's own has no tilelang): run your script with {meta['python']}; KernelModule sets "
                     f"TILELANG_DEFAULT_TARGET={meta['target']} before the kernel is defined, as kstrata's "
                     "verification did")
    lines += [f"use it (a script elsewhere finds {to.name} through this sys.path line, or run it as "
              f"PYTHONPATH={shlex.quote(parent)} {python} SCRIPT.py):",
              f"  import sys; sys.path.insert(0, {parent!r})",
              f"  from {to.name} import KernelModule, task_module",
              f"  layer = KernelModule({init})  # the task Model's init inputs at {meta['shape_text']}",
              f"  y = layer(*task_module().get_inputs())  # inputs of the task at {meta['shape_text']}"]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add the ``export`` command to ``app``."""

    @app.command("export")
    def export_cmd(
        run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run directory."),
        to: Path = typer.Option(..., "--to", help="Directory to write the package into (created)."),
        candidate: str | None = typer.Option(None, "--candidate", help="A candidate hash or prefix (default: the best)."),
        shape: str = typer.Option("timed", "--shape", help="Shape a static TVM build is built for: timed (the run's timing shape, where the speedup was measured), nominal, fit, or NAME=INT,..."),
        unranked: bool = typer.Option(False, "--unranked", help="Export the run's best even when nothing was ranked (every timing untrusted: not known to be faster; `kstrata retime RUN` on a quieter machine first is better)."),
        timeout: float | None = typer.Option(None, "--timeout", help="Limit in seconds of the candidate's work in the full-scope verification that a candidate the search verified at a reduced scope only gets first (default 600; a timeout there exports nothing but is not stored as a verdict)."),
    ) -> None:
        """Write the run's best kernel as an importable module (KernelModule, a torch.nn.Module)."""
        from kstrata.sandbox import IsolatedCallError

        from kstrata.cli.signals import exit_status, interrupted_word, sigterm_as_interrupt

        before = _exported(to)
        with user_errors():
            try:
                with sigterm_as_interrupt():
                    if timeout is not None:
                        from kstrata.cli.errors import MAX_SECONDS, check_number

                        check_number("--timeout", timeout, unit=" s", maximum=MAX_SECONDS)
                    out = export_run(run_dir, to, candidate, shape, unranked,
                                     on_confirm=lambda line: console.print(line, highlight=False, markup=False,
                                                                           soft_wrap=True), timeout_s=timeout,
                                     on_warning=lambda line: err_console.print(f"warning: {line}", highlight=False,
                                                                               markup=False, soft_wrap=True))
            except IsolatedCallError as e:
                raise OptionError(f"export failed: {e}") from None
            except KeyboardInterrupt as exc:  # newcomer nc20: Ctrl-C during the full-scope check said nothing
                err_console.print(f"\n{interrupted_word(exc)}: nothing was exported ({to} is as it was); run the "
                                  "same command again to export", markup=False, highlight=False, soft_wrap=True)
                raise typer.Exit(exit_status(exc)) from None
        after = _exported(out)
        if before is not None and before != after:
            console.print(f"replaced the earlier export in {out} (candidate {before[1][:12]} of run {before[0]})",
                          highlight=False, markup=False, soft_wrap=True)
        console.print(usage_hint(out), highlight=False, markup=False, soft_wrap=True)
