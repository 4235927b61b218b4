"""The benchmark harness: tasks × backends × proposers, resumable, at equal budgets.

A bench directory holds::

    bench.json                      the resolved spec and the environment (written once)
    bench.db                        the index: one row per (task, backend, proposer)
                                    cell with its status, stop reason and error
    runs/<backend>/<proposer>/<task>/   one optimize run directory per cell
                                    (its own run store, see kstrata.store)

Every cell gets the same :class:`~kstrata.search.budget.Budget`; what each one
spent (wall clock, evaluations, proposer calls, tokens, cost) is in its run's
ledger, so rows of the leaderboard are compared at equal cost. A cell is
marked ``done`` only after its optimize run finished; ``resume`` skips done
cells (unless the budget grew) and continues the others through
:func:`kstrata.search.loop.optimize` with ``resume=True``, which never
evaluates a candidate twice.
"""

from __future__ import annotations

import inspect
import json
import re
import secrets
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kstrata.bench.sampling import stratified_sample
from kstrata.search import budget as _budget_mod
from kstrata.search.budget import Budget
from kstrata.store.artifacts import write_atomic
from kstrata.tasks.base import Task, TaskError

INDEX_NAME = "bench.db"
CONFIG_NAME = "bench.json"

_INDEX_DDL = """
CREATE TABLE IF NOT EXISTS cells (
    task TEXT NOT NULL,
    backend TEXT NOT NULL,
    proposer TEXT NOT NULL,
    level INTEGER NOT NULL,
    category TEXT NOT NULL,
    run_dir TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('planned', 'running', 'done', 'failed', 'unsupported')),
    stop_reason TEXT,
    error TEXT,
    budget_json TEXT,
    started REAL,
    finished REAL,
    position INTEGER NOT NULL,
    PRIMARY KEY (task, backend, proposer)
);
"""


class BenchError(ValueError):
    """A bench spec or directory that cannot be used; the message says what to do."""


def parse_budget(text: str) -> Budget:
    """``"evals=3,wall=600,calls=10"`` -> :class:`Budget` (unset limits stay unlimited).

    Items are read by :func:`kstrata.search.budget.parse_budget` (the parser of
    ``kstrata optimize --budget`` too): same keys, same checks.

    Raises
    ------
    BenchError
        For a bad item (see :func:`kstrata.search.budget.parse_budget`) or a
        budget without any limit.
    """
    try:
        given = _budget_mod.parse_budget(text)
    except _budget_mod.BudgetError as e:
        raise BenchError(str(e)) from None
    values: dict[str, Any] = {"evaluations": None, **given}
    if all(v is None for v in values.values()):
        raise BenchError("a bench budget needs at least one limit, e.g. evals=10")
    return Budget.from_dict(values)


def resolve_suite(suite: str, names: Sequence[str] | None = None) -> list[Task]:
    """Tasks of ``suite``: ``all``/``kstrata`` (the shipped suite), a folder of the
    suite (``level1``, ``level2``, ``level3``, ``quant``), a directory of task
    files, or one task file; ``names`` keeps only those tasks (in suite order;
    in a directory, its other files need not be tasks).

    Raises
    ------
    kstrata.tasks.base.TaskError
        For an unknown suite or task name.
    """
    from kstrata.tasks.loader import SUITE_DIR, load_dir, load_dir_lenient, load_task, suite as shipped

    path = Path(suite)
    problems: list[TaskError] = []
    if suite in ("all", "kstrata"):
        tasks = shipped()
    elif (SUITE_DIR / suite).is_dir() and not path.exists():
        tasks = load_dir(SUITE_DIR / suite, check_import=False)
    elif path.is_dir() and names:  # the named tasks only: another file of the folder (a candidate) is no concern
        tasks, problems = load_dir_lenient(path)
    elif path.is_dir():
        tasks = load_dir(path)
    elif path.is_file():
        tasks = [load_task(path)]
    else:
        folders = sorted(p.name for p in SUITE_DIR.iterdir() if p.is_dir() and p.name[0] != "_")
        raise TaskError(f"unknown suite {suite!r}; use all, one of {', '.join(folders)}, "
                        "or a directory of task files")
    if names:
        by_name = {t.name: t for t in tasks}
        missing = [n for n in names if n not in by_name]
        if missing:
            why = f"; files there that are no task: {'; '.join(str(e) for e in problems[:3])}" if problems else ""
            from kstrata.tasks.loader import close_names

            hints = [f"{n} (did you mean: {', '.join(c)}?)" if (c := close_names(n, by_name)) else n
                     for n in missing]  # newcomer nc22: sofmax got no hint, where eval suggests softmax
            raise TaskError(f"tasks {', '.join(hints)} are not in suite {suite!r}{why}; `kstrata tasks list` "
                            "shows the names")
        tasks = [t for t in tasks if t.name in set(names)]
    return tasks


# -- proposers -----------------------------------------------------------------
#: name -> factory; called with ``backend=<Backend>`` when it takes that keyword
ProposerFactory = Callable[..., Any]


def builtin_proposers(**options: Any) -> dict[str, ProposerFactory]:
    """Factories of the proposers in :mod:`kstrata.agents.registry` (``builtin``,
    ``llm``, ...), each ``factory(backend=<Backend>)``; ``options`` (``llm``,
    ``config``, ``record``) go to its ``make_proposer``. Empty when no registry
    is installed."""
    try:
        from kstrata.agents import registry
    except ImportError:
        return {}
    make = getattr(registry, "make_proposer", None)
    if make is None:
        return {}
    return {n: (lambda backend, _n=n: make(_n, backend=backend, **options))
            for n in getattr(registry, "NAMES", ())}


def get_proposer(name: str, backend: Any, factories: Mapping[str, ProposerFactory] | None = None) -> Any:
    """The proposer ``name`` for ``backend`` (a :class:`~kstrata.backends.base.Backend`)
    from ``factories`` (default :func:`builtin_proposers`). A factory is called
    with ``backend=`` when it takes that keyword, else with no arguments.

    Raises
    ------
    BenchError
        For an unknown name (the message lists the known ones) or a factory
        that refuses the backend (its ``ValueError``).
    """
    factories = builtin_proposers() if factories is None else factories
    if name not in factories:
        known = ", ".join(sorted(factories)) or "none registered"
        raise BenchError(f"unknown proposer {name!r}; known proposers: {known}")
    factory = factories[name]
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    try:
        return factory(backend=backend) if "backend" in params else factory()
    except ValueError as e:
        raise BenchError(f"proposer {name!r} on {getattr(backend, 'name', backend)}: {e}") from e


# -- the index -----------------------------------------------------------------
class BenchIndex:
    """``BENCH_DIR/bench.db``: one row per cell (SQLite, each write a transaction)."""

    def __init__(self, bench_dir: str | Path, read_only: bool = False):
        """Open (or create) the index; ``read_only`` reads an existing one
        without writing beside it (a bench folder that cannot be written: a
        read-only mount; :func:`kstrata.store.run_store.readonly_uri`)."""
        from kstrata.store.run_store import readonly_uri

        self.path = Path(bench_dir) / INDEX_NAME
        if read_only:
            self.conn = sqlite3.connect(readonly_uri(self.path), isolation_level=None, timeout=10.0,
                                        check_same_thread=False, uri=True)
            self.conn.row_factory = sqlite3.Row
            return
        # shared by the cell threads of a parallel bench, one write at a time (run_bench's lock)
        self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=10.0,
                                    check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(_INDEX_DDL)

    def __enter__(self) -> BenchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.conn.close()

    def plan(self, rows: Sequence[dict[str, Any]]) -> None:
        """Insert the planned cells (all in one transaction; existing ones kept)."""
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            for i, r in enumerate(rows):
                c.execute(
                    "INSERT OR IGNORE INTO cells (task, backend, proposer, level, category, run_dir,"
                    " status, position) VALUES (?,?,?,?,?,?,?,?)",
                    (r["task"], r["backend"], r["proposer"], r["level"], r["category"],
                     r["run_dir"], r["status"], i),
                )
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def update(self, task: str, backend: str, proposer: str, **values: Any) -> None:
        """Set columns of one cell."""
        cols = ", ".join(f"{k} = ?" for k in values)
        self.conn.execute(f"UPDATE cells SET {cols} WHERE task = ? AND backend = ? AND proposer = ?",
                          (*values.values(), task, backend, proposer))

    def cells(self) -> list[dict[str, Any]]:
        """Every cell, in plan order, each checked (:func:`check_cell`).

        Raises
        ------
        kstrata.store.StoreError
            For a cell that is not what kstrata writes (bench.db hand-edited)."""
        rows = [dict(r) for r in self.conn.execute("SELECT * FROM cells ORDER BY position")]
        for row in rows:
            check_cell(self.path.parent, row)
        return rows


#: the kinds of a cell's columns kstrata writes and reads (bench.db keeps whatever is put there)
_CELL_KINDS = {"task": str, "backend": str, "proposer": str, "level": int, "category": str, "run_dir": str,
               "status": str}


def check_cell(bench_dir: Path, cell: Mapping[str, Any]) -> None:
    """Raise :class:`kstrata.store.StoreError` unless ``cell`` (a row of
    ``bench.db``) has its columns of the kinds kstrata writes and names a run
    folder inside ``bench_dir``: a relative path of plain names (as
    :func:`plan_cells` makes, ``runs/<backend>/<proposer>/<task>``) that
    resolves there, links followed. bench.db is data anyone could have edited:
    a cell naming ``/elsewhere/run`` or ``../run`` had ``kstrata report`` embed
    another run's candidates' sources, and ``kstrata bench --resume`` resume
    (write into) that run (red team rt62)."""
    from kstrata.store.run_store import StoreError

    where = f"{bench_dir / INDEX_NAME} is damaged"
    for key, kind in _CELL_KINDS.items():
        if not isinstance(cell.get(key), kind):
            raise StoreError(f"{where}: a cell's {key} is {str(cell.get(key))[:40]!r}, not "
                             f"{'an integer' if kind is int else 'text'}; start a new bench with --out, or restore "
                             "the file")
    run_dir = cell["run_dir"]
    parts = run_dir.split("/")
    inside = not run_dir.startswith("/") and all(part not in ("", ".", "..") and "\\" not in part for part in parts)
    if inside:
        root = bench_dir.resolve()
        inside = (bench_dir / run_dir).resolve().is_relative_to(root) and (bench_dir / run_dir).resolve() != root
    if not inside:
        raise StoreError(f"{where}: cell {cell['task']}/{cell['backend']}/{cell['proposer']} names the run folder "
                         f"{run_dir[:200]!r}, which is not a folder inside the bench; start a new bench with --out, "
                         "or restore the file")


def read_config(bench_dir: str | Path) -> dict[str, Any]:
    """``BENCH_DIR/bench.json`` as a JSON object.

    Raises
    ------
    kstrata.store.StoreError
        When it cannot be read, is not JSON, or is not an object (naming the file)."""
    from kstrata.store.run_store import StoreError

    path = Path(bench_dir) / CONFIG_NAME
    try:
        config = json.loads(path.read_text())
        why = None if isinstance(config, dict) else f"a JSON {type(config).__name__}, not an object"
    except (OSError, UnicodeDecodeError, ValueError) as e:
        why = str(e)
    except RecursionError:
        why = "JSON nested too deep"
    if why is not None:
        raise StoreError(f"{path} is damaged ({why}); start a new bench with --out, or restore the file")
    return config


# -- the spec and the run ------------------------------------------------------
@dataclass(frozen=True)
class BenchSpec:
    """What a bench runs (saved as ``bench.json``; a resume must match it).

    Attributes
    ----------
    suite:
        Suite name or path, see :func:`resolve_suite`.
    tasks:
        Task names to keep (empty: all of the suite).
    backends, proposers:
        Registry names.
    budget:
        Per cell (:class:`Budget` fields); the same for every cell.
    sample:
        Tasks per backend, stratified over levels and categories (``None``: all).
    seed:
        Seeds the sample and every optimize run.
    policy:
        Search policy name (:data:`kstrata.search.policies.POLICIES`).
    baselines:
        Baselines each correct candidate is timed against; the first is the
        primary (the one searched on and used by fast_p).
    preset:
        Integrity preset of the verifier.
    timing_shape:
        The shape each cell times candidates and baselines at, as
        ``kstrata optimize --timing-shape`` reads it
        (:func:`kstrata.tasks.scaling.parse_shape_option`): ``auto``
        (default, as optimize's: ``fit`` on CPU backends and ``nominal`` on
        GPUs; newcomer nc17: a bench timed at the nominal shape where optimize
        timed the same task at ``fit``), ``nominal`` (the task's nominal shape),
        ``fit`` (the nominal shape halved until one call is at most 0.25 GFLOP
        and 16 MB: a GPU-sized nominal shape costs seconds per call on a CPU)
        or ``NAME=INT,...``. Verification always
        covers the task's own shapes, and the timed shape too.
    """

    suite: str
    backends: tuple[str, ...]
    proposers: tuple[str, ...]
    budget: dict[str, Any]
    tasks: tuple[str, ...] = ()
    sample: int | None = None
    seed: int = 0
    policy: str = "greedy"
    baselines: tuple[str, ...] = ("eager",)
    preset: str = "strict"
    timing_shape: str = "auto"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BenchSpec:
        data = dict(data)
        for key in ("backends", "proposers", "tasks", "baselines"):
            data[key] = tuple(data.get(key) or ())
        return cls(**data)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", name)


def _supports(backend: Any, task: Task) -> bool:
    try:
        backend.initial_sources(task)
    except NotImplementedError:
        return False
    return True


def plan_cells(spec: BenchSpec, tasks: Sequence[Task], backends: Mapping[str, Any]) -> list[dict]:
    """The cells of ``spec``: per backend the (sampled) supported tasks × proposers;
    tasks a backend has no starting point for are listed as ``unsupported``."""
    rows = []
    for bname in spec.backends:
        backend = backends[bname]
        supported = [t for t in tasks if _supports(backend, t)]
        chosen = supported if spec.sample is None else stratified_sample(supported, spec.sample, spec.seed)
        picked = {t.name for t in chosen}
        for t in tasks:
            if spec.sample is not None and t.name not in picked and t in supported:
                continue
            for p in spec.proposers:
                rows.append({
                    "task": t.name, "backend": bname, "proposer": p, "level": t.level,
                    "category": t.category,
                    "run_dir": f"runs/{_safe(bname)}/{_safe(p)}/{_safe(t.name)}",
                    "status": "planned" if t.name in picked else "unsupported",
                })
    return rows


def environment_info(backends: Mapping[str, Any]) -> dict[str, Any]:
    """Library versions, devices and clock-sensitive settings of this machine."""
    import platform

    from kstrata import __version__
    from kstrata.measure import environment

    devices = sorted({getattr(b, "device", "cpu") for b in backends.values()})
    return {
        "kstrata": __version__,
        "platform": platform.platform(),
        "versions": environment.versions(),
        "devices": {d: environment.device_name(d) for d in devices},
        "settings": environment.settings(devices[0] if devices else "cpu"),
        "backends": {n: dict(b.availability().versions) for n, b in backends.items()},
    }


def timing_shape(spec: BenchSpec, task: Task, backend: Any) -> dict[str, int]:
    """The full shape ``task``'s cell on ``backend`` times at (``spec.timing_shape``).

    Raises
    ------
    BenchError
        On a malformed value, an unknown shape variable, or ``fit`` for a task
        without the FLOP/byte formulas to fit by.
    """
    from kstrata.tasks.scaling import ShapeFitError, timing_shape_for

    try:
        return timing_shape_for(spec.timing_shape, task, getattr(backend, "device", "cpu"))
    except (ValueError, ShapeFitError) as e:
        raise BenchError(f"timing shape {spec.timing_shape!r} for {task.name}: {e}") from None


def default_evaluator(spec: BenchSpec, backend: Any, secret: str, pool: Any,
                      shape: dict[str, int] | None = None) -> Any:
    """:class:`~kstrata.search.evaluators.VerifyMeasureEvaluator` with the spec's
    baselines and preset, timing at ``shape`` (default nominal; :func:`run_bench`
    passes the cell's :func:`timing_shape`); ``pool`` is a worker pool or an
    :class:`~kstrata.execute.Executor` (``--executor ray``)."""
    from kstrata.execute import Executor
    from kstrata.search.evaluators import VerifyMeasureEvaluator

    where = {"executor": pool} if isinstance(pool, Executor) else {"pool": pool}
    return VerifyMeasureEvaluator(secret=secret, baselines=spec.baselines, preset=spec.preset,
                                  shape=shape, **where)


def _make_evaluator(factory: Callable[..., Any], spec: BenchSpec, backend: Any, secret: str, pool: Any,
                    shape: dict[str, int]) -> Any:
    """``factory(spec, backend, secret, pool)``, with ``shape=`` when it takes one."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    extra = {"shape": shape} if "shape" in params else {}
    return factory(spec, backend, secret, pool, **extra)


class _Serialized:
    """A proposer shared by cells running at once: one ``propose`` at a time."""

    def __init__(self, proposer: Any):
        self._proposer, self._lock = proposer, threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._proposer, name)

    def propose(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return self._proposer.propose(*args, **kwargs)


@dataclass
class BenchResult:
    """Outcome of :func:`run_bench`: the directory and each cell's final row."""

    bench_dir: Path
    cells: list[dict[str, Any]] = field(default_factory=list)
    ran: list[tuple[str, str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)


def _check_resume(bench_dir: Path, spec: BenchSpec) -> None:
    from kstrata.store.run_store import StoreError

    try:
        old = BenchSpec.from_dict(read_config(bench_dir)["spec"])
    except (KeyError, TypeError, ValueError) as e:
        raise StoreError(f"{bench_dir / CONFIG_NAME} is damaged (its spec is not one kstrata wrote: "
                         f"{type(e).__name__}: {str(e)[:200]}); start a new bench with --out, or restore the "
                         "file") from None
    diff = [k for k, v in spec.to_dict().items() if k != "budget" and old.to_dict()[k] != v]
    if diff:
        raise BenchError(
            f"{bench_dir} was run with other settings ({', '.join(diff)}); resume with the same "
            "suite, tasks, backends, proposers, sample, seed, policy, baselines, preset and timing shape "
            "(only the budget may change), or choose another --out")


def run_bench(
    spec: BenchSpec,
    bench_dir: str | Path,
    resume: bool = False,
    *,
    proposers: Mapping[str, ProposerFactory] | None = None,
    evaluator_factory: Callable[[BenchSpec, Any, str, Any], Any] | None = None,
    progress: Callable[[str, dict[str, Any]], None] | None = None,
    executor: str = "local",
    parallel: int | None = None,
) -> BenchResult:
    """Run every cell of ``spec`` in ``bench_dir`` (created, or continued when ``resume``).

    Parameters
    ----------
    spec:
        What to run, see :class:`BenchSpec`.
    bench_dir:
        The bench directory.
    resume:
        Continue the bench in ``bench_dir``: done cells are skipped unless the
        budget differs from theirs; unfinished cells continue their run.
    proposers:
        Proposer factories by name (default :func:`builtin_proposers`), see
        :func:`get_proposer`; one proposer per (proposer, backend) serves all tasks.
    evaluator_factory:
        ``(spec, backend, secret, pool) -> Evaluator`` (default
        :func:`default_evaluator`); one per cell. A factory with a ``shape``
        parameter is also given the cell's :func:`timing_shape`.
    progress:
        Called as ``progress(event, info)`` with event ``cell_start``,
        ``cell_done``, ``cell_skip`` or ``cell_failed`` and the cell's row;
        between a cell's start and end also with the search's own events
        (``evaluated``, ``proposing``, ... as :func:`kstrata.search.loop.optimize`
        gives them), their info merged into the cell's row (``tree``, ``spent``).
        Calls are serialized when cells run at once.
    executor:
        ``"local"`` (one worker process per backend, cells one after another)
        or ``"ray[:ADDRESS]"`` (see :func:`kstrata.execute.select.make_executor`:
        each backend's calls are Ray tasks, one candidate per GPU, and cells run
        at once). Results do not depend on it; the stores stay on this host.
    parallel:
        Cells run at once (default: 1 locally, the Ray executor's capacity,
        e.g. its GPUs, on Ray). A proposer shared by cells proposes for one at
        a time.

    Returns
    -------
    BenchResult

    Raises
    ------
    BenchError
        For an unknown proposer, an unusable backend, a directory that holds a
        bench (without ``resume``) or none (with it), or a resume with another spec.
    kstrata.tasks.base.TaskError, kstrata.backends.registry.UnknownBackendError
        For unknown tasks or backends.
    """
    from concurrent.futures import ThreadPoolExecutor

    from kstrata.backends.registry import get_backend
    from kstrata.execute import WorkerPool
    from kstrata.execute.select import make_executor, parse_executor
    from kstrata.search.loop import SearchSettings, optimize
    from kstrata.search.policies import make_policy
    from kstrata.store.lock import LOCK_NAME, check_free, run_lock
    from kstrata.store.run_store import RunStore, foreign_folder

    bench_dir = Path(bench_dir)
    executor_kind, _ = parse_executor(executor)  # a bad --executor fails before anything is written
    factories = builtin_proposers() if proposers is None else proposers
    budget = Budget.from_dict(spec.budget)
    make_policy(spec.policy)  # unknown policy: error before anything is written
    backends = {name: get_backend(name) for name in spec.backends}
    for name, b in backends.items():
        av = b.availability()
        if not av.usable:
            raise BenchError(f"backend {name} is not usable here: {av.reason}")
    # built once per (proposer, backend), before anything is written: a proposer
    # that refuses a backend or a misconfigured provider fails here
    built = {(p, b): get_proposer(p, backend, factories)
             for b, backend in backends.items() for p in spec.proposers}
    exists = (bench_dir / CONFIG_NAME).is_file()
    if resume and not exists:
        raise BenchError(f"{bench_dir} holds no bench to resume; run without --resume")
    if not resume and exists:
        raise BenchError(f"{bench_dir} already holds a bench; pass --resume or choose another --out")
    foreign = None if resume else foreign_folder(bench_dir, {LOCK_NAME}, "bench")  # a lock file is kstrata's own
    if foreign:  # never among the user's files
        raise BenchError(f"{bench_dir} is {foreign}")
    tasks = resolve_suite(spec.suite, spec.tasks)
    # a bad timing shape fails before anything is written
    shapes = {(t.name, b): timing_shape(spec, t, backend)
              for b, backend in backends.items() for t in tasks if _supports(backend, t)}
    if resume:
        check_free(bench_dir, "kstrata bench")  # a second bench on this folder is refused before any work
        _check_resume(bench_dir, spec)
    else:
        rows = plan_cells(spec, tasks, backends)
        bench_dir.mkdir(parents=True, exist_ok=True)
        with BenchIndex(bench_dir) as index:
            index.plan(rows)
        write_atomic(bench_dir / CONFIG_NAME, json.dumps(
            {"spec": spec.to_dict(), "created": time.time(), "executor": executor,
             "environment": environment_info(backends)}, indent=2, default=str) + "\n")
    by_name = {t.name: t for t in tasks}
    make_eval = evaluator_factory or default_evaluator
    budget_json = json.dumps(budget.to_dict(), sort_keys=True)
    secret = secrets.token_hex(16)  # hidden tests: never stored, never shown to a proposer
    pools: dict[str, Any] = {}
    result = BenchResult(bench_dir)
    lock = threading.Lock()  # the index and result, shared by cell threads

    def run_cell(index: BenchIndex, cell: dict[str, Any]) -> None:
        key = (cell["task"], cell["backend"], cell["proposer"])
        run_dir = bench_dir / cell["run_dir"]
        backend = backends[cell["backend"]]
        with lock:
            index.update(*key, status="running", started=time.time(), error=None)
            _emit(progress, "cell_start", cell)
        def search_progress(event: str, info: dict[str, Any]) -> None:  # a cell is not silent for minutes
            with lock:
                _emit(progress, event, {**cell, **info})

        try:
            proposer = built[cell["proposer"], cell["backend"]]
            shape = shapes[cell["task"], cell["backend"]]
            evaluator = _make_evaluator(make_eval, spec, backend, secret, pools[cell["backend"]], shape)
            run = optimize(
                by_name[cell["task"]], backend, proposer, evaluator, spec.policy, budget,
                run_dir, resume=RunStore.exists(run_dir),
                settings=SearchSettings(seed=spec.seed, primary_baseline=spec.baselines[0]),
                progress=None if progress is None else search_progress,
                # cli.timing_shape is where a run records its timing shape (retime and show read it)
                extra_config={"bench": {"dir": str(bench_dir.resolve()),
                                        "baselines": list(spec.baselines)},
                              "cli": {"timing_shape": shape}},
            )
        except Exception as e:  # noqa: BLE001 - one broken cell never ends the bench
            error = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=8)}"
            with lock:
                index.update(*key, status="failed", error=error, finished=time.time(),
                             budget_json=budget_json)
                _emit(progress, "cell_failed", {**cell, "error": error})
            return
        with lock:
            index.update(*key, status="done", stop_reason=run.stop_reason,
                         finished=time.time(), budget_json=budget_json)
            result.ran.append(key)
            _emit(progress, "cell_done", {**cell, "stop_reason": run.stop_reason,
                                          "spent": run.spent,
                                          "speedup": run.best.speedup if run.best is not None else None})

    try:
        # one bench writes a bench folder at a time (its cells' runs are locked each by the search)
        with run_lock(bench_dir, "kstrata bench"), BenchIndex(bench_dir) as index:
            todo = []
            for cell in index.cells():
                key = (cell["task"], cell["backend"], cell["proposer"])
                if cell["status"] == "unsupported":
                    continue
                if cell["status"] == "done" and cell["budget_json"] == budget_json:
                    result.skipped.append(key)
                    _emit(progress, "cell_skip", cell)
                    continue
                backend = backends[cell["backend"]]
                if cell["backend"] not in pools:
                    pools[cell["backend"]] = WorkerPool(
                        size=1, env=dict(getattr(backend, "worker_env", {}) or {})) \
                        if executor_kind == "local" else make_executor(executor, backend=backend)
                todo.append(cell)
            workers = parallel or max((getattr(p, "capacity", 1) for p in pools.values()), default=1)
            if workers > 1 and len(todo) > 1:
                built = {k: _Serialized(p) for k, p in built.items()}
                with ThreadPoolExecutor(workers, thread_name_prefix="kstrata-cell") as threads:
                    list(threads.map(lambda c: run_cell(index, c), todo))
            else:
                for cell in todo:
                    run_cell(index, cell)
            result.cells = index.cells()
    finally:
        for pool in pools.values():
            pool.close()
    return result


def _emit(progress: Callable[[str, dict], None] | None, event: str, info: dict) -> None:
    if progress is not None:
        progress(event, info)
