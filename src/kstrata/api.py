"""kstrata's Python API: load a task, evaluate a candidate, optimize, export.

The CLI (``kstrata eval``, ``kstrata optimize``, ``kstrata export``) is a thin
layer over these functions; :mod:`kstrata` re-exports them::

    import kstrata

    task = kstrata.load_task("softmax")                       # a suite name or a task file
    result = kstrata.evaluate(task, "my_softmax.py", backend="pytorch")
    print(result.verdict, result.speedup)
    run = kstrata.optimize("rmsnorm", backend="tvm-llvm", budget="evals=12")
    kstrata.export(run.run_dir, "exported/")                  # then: from exported import KernelModule

Candidate code is never imported here: it is verified and timed in sandboxed
candidate processes (see README, "Trust boundary").
"""

from __future__ import annotations

import secrets as _secrets
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kstrata import jsontext


def load_task(name_or_path: str | Path) -> Any:
    """A task from the shipped suite (``"softmax"``) or a KernelBench-format file.

    Returns
    -------
    kstrata.tasks.base.Task

    Raises
    ------
    kstrata.tasks.base.TaskError
        With one message when the name is unknown or the file does not load.
    """
    from kstrata.tasks.loader import resolve_task

    return resolve_task(str(name_or_path))


@dataclass
class EvalResult:
    """What :func:`evaluate` found.

    Attributes
    ----------
    evaluation:
        The verifier's :class:`kstrata.verify.Evaluation` (verdict, check,
        evidence, feedback, test counts).
    timing:
        ``None`` when not timed; else a dict: ``candidate_ms``, ``baseline_ms``
        (eager PyTorch, ms), ``speedup`` with ``speedup_ci`` ``[low, high]``
        and ``confidence``, ``roofline_fraction``, ``bound``, ``suspicious``,
        ``method``, ``pairs``; or ``skipped``/``error`` with the reason.
    backend:
        The backend the candidate was evaluated on.
    """

    evaluation: Any
    timing: dict[str, Any] | None = None
    backend: str = ""
    sources: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def verdict(self) -> str:
        """``correct``, ``incorrect``, ``compile_error``, ``runtime_error``, ``timeout`` or ``rejected``."""
        return self.evaluation.verdict.value

    @property
    def correct(self) -> bool:
        return bool(self.evaluation.correct)

    @property
    def speedup(self) -> float | None:
        """Speedup over eager PyTorch (point estimate), when timed."""
        return (self.timing or {}).get("speedup")


def import_sources(folder: Path, meta: Any) -> dict[str, str]:
    """The level texts a ``candidate.json`` (``meta``, parsed) of a ``kstrata
    import`` folder names: ``{level: text}`` from its ``levels`` map of level
    name to a file directly inside ``folder``.

    Raises
    ------
    ValueError
        If ``meta`` or its ``levels`` is not a JSON object, or a level or file
        name is not one plain name (:class:`kstrata.store.artifacts.UnsafeName`:
        ``"../../.ssh/id_rsa"`` or ``"/etc/passwd"`` would read a file outside
        the folder into the candidate, and so into prompts and the run), or
        a named file is a symbolic link.
    OSError
        If a named file cannot be read.
    """
    from kstrata.store.artifacts import safe_file_name, safe_level

    levels = meta.get("levels", {}) if isinstance(meta, dict) else None
    if not isinstance(levels, dict):
        raise ValueError(f"{folder / 'candidate.json'}: 'levels' must be an object {{level: file name}}")
    return {safe_level(lv): _level_text(folder / safe_file_name(f)) for lv, f in levels.items()}


def import_meta(folder: Path) -> dict[str, Any]:
    """The ``candidate.json`` of a ``kstrata import`` folder, parsed.

    Raises
    ------
    ValueError
        When it is not JSON, or not a JSON object (a folder from elsewhere
        whose ``candidate.json`` held a list ended ``eval`` and ``optimize
        --initial`` in an AttributeError traceback; red-team rt57).
    OSError
        When it cannot be read.
    """
    file = folder / "candidate.json"
    try:
        meta = jsontext.loads(file.read_text())
    except ValueError as e:
        raise ValueError(f"{file}: not JSON ({e}); a kstrata import folder's candidate.json is an object "
                         "{\"backend\": ..., \"levels\": {level: file name}}") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{file}: a JSON {type(meta).__name__}, not an object {{\"backend\": ..., "
                         "\"levels\": {level: file name}}")
    if not isinstance(meta.get("backend", ""), (str, type(None))):
        raise ValueError(f"{file}: 'backend' is a JSON {type(meta['backend']).__name__}, not a backend name")
    return meta


def _level_text(file: Path) -> str:
    """The text of a candidate folder's level ``file``, which must not be a
    symbolic link: a folder from elsewhere (a downloaded ``best/``, export or
    import) whose ``graph.py`` links to ``~/.ssh/id_rsa`` or a run's
    ``secret`` had that file read into the candidate, and so into the
    sandbox, prompts and the run (red-team rt57).

    Raises
    ------
    ValueError
        When ``file`` is a symbolic link.
    """
    if file.is_symlink():
        raise ValueError(f"{file}: a symbolic link; a candidate's level must be a file inside {file.parent}")
    return source_text(file)


def source_text(file: Path) -> str:
    """The text of a candidate's source ``file`` (UTF-8).

    Raises
    ------
    ValueError
        Naming the file when it is not UTF-8 text (``kstrata eval`` said only
        "'utf-8' codec can't decode byte 0xff in position 0", not which file;
        red team rt62), or when it is longer than any source
        (:func:`kstrata.pysyntax.read_source`: a 3 GB file was read whole,
        red team rt65)."""
    from kstrata.pysyntax import read_source

    try:
        return read_source(file)  # a SourceTooLarge (ValueError) names the file
    except UnicodeDecodeError as e:
        raise ValueError(f"{file}: not UTF-8 text ({e.reason} at byte {e.start}); a candidate is source text") \
            from None


def read_sources_json(path: Path) -> dict[str, str]:
    """A candidate's sources from a JSON file of ``{level: source text}``, read
    as text (never imported), at most 8 levels of the longest source kstrata
    parses; what ``optimize --initial FILE.json`` and ``eval TASK FILE.json``
    take. The levels are not checked against a backend here.

    Raises
    ------
    ValueError
        Starting with the path: a file over the limit, not JSON, not an
        object, or a value that is not a string (naming its key)."""
    from kstrata.pysyntax import MAX_SOURCE_CHARS
    from kstrata.surrogates import without_lone_surrogates
    from kstrata.textfile import TextTooLarge, read_text

    try:  # read whole before: a 4 GB file, MemoryError (red team rt65)
        sources = jsontext.loads(read_text(path, 8 * MAX_SOURCE_CHARS, "a candidate's sources"))
    except TextTooLarge:
        raise
    except ValueError as e:
        raise ValueError(f"{path}: not JSON: {e}") from None
    if not isinstance(sources, dict):
        raise ValueError(f"{path}: a JSON {type(sources).__name__}, not an object; expected {{level: source text}}")
    wrong = [k for k, v in sources.items() if not isinstance(v, str)]
    if wrong:  # name the key (newcomer nc16: {"schedule": 42} was told it was not an object)
        raise ValueError(f"{path}: the value of {', '.join(map(repr, wrong))} is a JSON "
                         f"{type(sources[wrong[0]]).__name__}, not source text; give each level's source as "
                         "a JSON string")
    return {k: without_lone_surrogates(v) for k, v in sources.items()}


def read_candidate(path: str | Path, backend: str | None = None) -> tuple[dict[str, str], str]:
    """The sources of a candidate on disk, as text (never imported), and its backend.

    ``path`` is a kernel file (KernelBench format, defines ``ModelNew``), a
    run's ``best/`` or ``candidates/<hash>/`` directory, one level file in
    such a directory (``best/graph.py`` reads the whole directory), or a
    ``kstrata import`` directory (``candidate.json``), a ``kstrata export``
    package (its ``sources/``), or a JSON file of ``{level: source text}``
    (:func:`read_sources_json`, as ``optimize --initial`` takes it). A run's ``candidates/<prefix>`` takes a hash
    prefix. The backend is ``backend`` when given, else the run's
    (``RUN/config.json``), the import's or the export's (``export.json``),
    else ``pytorch``.

    Returns
    -------
    (sources, backend)
        ``{level: text}`` and the backend name.

    Raises
    ------
    FileNotFoundError
        When ``path`` does not exist or a directory holds no level files.
    ValueError
        When a lone file is given for a ``tvm-*`` backend without the
        ``kstrata-tvm source`` header of a TVM source-level text (e.g. a
        PyTorch ``ModelNew`` file): the message says what to give instead;
        when a directory's level file is a symbolic link; or for a JSON file
        that :func:`read_sources_json` refuses or whose levels are not the backend's.
    """
    from kstrata.backends.registry import get_backend
    from kstrata.pysyntax import not_python_file
    from kstrata.store.artifacts import backend_extensions, source_name

    path = resolve_candidate_prefix(Path(path))
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such candidate file or directory")
    if path.is_dir() and (path / "export.json").is_file() and (path / "sources").is_dir():
        # a `kstrata export` package: its sources/ and the backend its export.json names
        return read_candidate(path / "sources", backend or _recorded_backend(path / "export.json"))
    run_backend = candidate_run_backend(path, backend)
    if path.is_file() and (backend or run_backend):
        levels = get_backend(backend or run_backend).levels
        if len(levels) > 1 and path.stem in levels:
            path = path.parent  # one level of a multi-level candidate: take all its levels
    if path.is_file() and path.suffix == ".json" and not run_backend:
        # {level: source text}, as optimize --initial FILE.json takes it (newcomer nc22)
        name = backend or "pytorch"
        sources = read_sources_json(path)
        levels = get_backend(name).levels
        unknown = sorted(set(sources) - set(levels))
        if not sources or unknown:
            raise ValueError(f"{path}: levels {unknown or '(none)'} are not levels of {name} ({', '.join(levels)})")
        return sources, name
    if path.is_file():
        name = backend or run_backend or "pytorch"
        other = None if run_backend or name.startswith("tvm-") else \
            not_python_file(path, "the .py file that defines ModelNew")
        if other:  # a notes.txt read "Python syntax error" (newcomer nc22)
            raise ValueError(other)
        text = source_text(path)
        if name.startswith("tvm-") and "kstrata-tvm source" not in text:
            # read as text only (never imported): a lone file on TVM is its generated source, with headers
            what = "a PyTorch/KernelBench file (it defines ModelNew)" if "ModelNew" in text else "not one"
            raise ValueError(
                f"{path}: a single file for {name} must be a TVM source-level file with its 'kstrata-tvm source' "
                f"and 'kstrata-plan' header lines (what a run writes as source); this is {what}. Give a run's "
                f"best/ or candidates/<hash>/ directory (its graph.py and schedule.py), evaluate a PyTorch "
                f"ModelNew with --backend pytorch, or start a TVM run from the task: kstrata optimize TASK "
                f"--backend {name}")
        return {"source": text}, name
    if (path / "candidate.json").is_file():
        meta = import_meta(path)
        name = backend or meta.get("backend") or "pytorch"
        return import_sources(path, meta), name
    name = backend or run_backend or "pytorch"
    b = get_backend(name)
    ext = backend_extensions(b)
    sources = {}
    for lv in b.levels:  # a run folder written before a level had its own extension holds <level>.txt
        found = [f for f in (path / source_name(lv, ext), path / source_name(lv, {}))
                 if f.is_file() or f.is_symlink()]
        if found:
            sources[lv] = _level_text(found[0])
    if not sources:
        raise FileNotFoundError(f"{path}: no level files of {name} ({', '.join(source_name(lv, ext) for lv in b.levels)})"
                                + (f"; its sources/ folder holds them: give {path / 'sources'}"
                                   if (path / "sources").is_dir() else ""))
    return sources, name


def candidate_task(path: str | Path) -> str | None:
    """The name of the task whose candidate ``path`` is, where kstrata wrote
    it down: a run's ``best/`` or ``candidates/<hash>`` (``RUN/config.json``),
    a ``kstrata import`` directory (``candidate.json``) or a ``kstrata
    export`` package (``export.json``); None for a plain file or where none
    is recorded."""
    path = resolve_candidate_prefix(Path(path))
    here = path if path.is_dir() else path.parent
    records = [(run / "config.json", lambda d: (d.get("task") or {}).get("name"))
               for run in (here.parent, here.parent.parent) if (run / "run.db").is_file()]
    records += [(here / "candidate.json", lambda d: d.get("task")), (here / "export.json", lambda d: d.get("task"))]
    for file, read in records:
        try:
            name = read(jsontext.loads(file.read_text())) if file.is_file() else None
        except (OSError, ValueError, AttributeError):
            name = None
        if isinstance(name, str) and name:
            return name
    return None


def resolve_candidate_prefix(path: Path) -> Path:
    """``RUN/candidates/<prefix>`` as the one candidate directory whose hash starts
    with ``prefix``, resolved by the run's store as ``kstrata show`` resolves it
    (:func:`kstrata.store.candidate_path.candidate_path`); ``path`` itself when it
    exists or is not under a run's ``candidates/``.

    Raises
    ------
    FileNotFoundError
        When the prefix matches no candidate of the run, or several (the message
        says which and what to give instead).
    """
    from kstrata.store.candidate_path import candidate_path
    from kstrata.store.run_store import StoreError

    try:
        return candidate_path(path)
    except StoreError as e:
        raise FileNotFoundError(f"{path}: {e}") from None


def candidate_run_backend(path: str | Path, given: str | None = None) -> str | None:
    """The backend of the run ``path`` belongs to (``RUN/best``, ``RUN/candidates/<h>``, or a file in
    them); None where ``path`` is not in a run, or where its record names none and the caller
    ``given`` one (``--backend``).

    Raises
    ------
    ValueError
        When the run's ``config.json`` names no backend as text (damaged or
        hand-edited: ``"backend": 5`` was read as no backend and the
        candidate evaluated as ``pytorch``, "no level files of pytorch";
        red-team rt65) and none is ``given``: the message names the file and
        what to do."""
    path = Path(path)
    here = path if path.is_dir() else path.parent
    for run in (here.parent, here.parent.parent):
        cfg = run / "config.json"
        if (run / "run.db").is_file() and cfg.is_file():
            backend = _recorded_backend(cfg)
            if backend is None and not given:
                raise ValueError(f"{cfg} names no backend (the file is damaged or was edited by hand): pass "
                                 f"--backend with the run's backend (`kstrata tree {shlex.quote(str(run))}` "
                                 "names it, from run.db)")
            return backend
    return None


def _recorded_backend(file: Path) -> str | None:
    """The ``backend`` a JSON record kstrata wrote (a run's ``config.json``, an
    export's ``export.json``) names; None where the file is not JSON, not an
    object or its backend not text (a damaged or hand-made record ended
    ``eval`` in a TypeError/AttributeError traceback; red-team rt57)."""
    try:
        value = jsontext.loads(file.read_text())
    except (OSError, ValueError):
        return None
    backend = value.get("backend") if isinstance(value, dict) else None
    return backend if isinstance(backend, str) and backend else None


def time_against_eager(pool: Any, backend: Any, task: Any, sources: dict[str, str], budget_ms: float,
                       timeout: float, shape: dict[str, int] | None = None) -> dict[str, Any]:
    """Paired timing of ``sources`` against eager PyTorch in a worker of ``pool``
    (:func:`kstrata.measure.candidate.time_candidate`); errors become data
    (``{"error": ...}``, ``{"skipped": ...}``). Keys as :attr:`EvalResult.timing`."""
    from kstrata.measure.timing import TimingConfig

    if not getattr(backend, "timing_meaningful", True):
        return {"skipped": f"not timed: {backend.name} runs kernels in an interpreter, whose timings mean "
                           "nothing (time it with the GPU backend)"}
    r = pool.call("kstrata.measure.candidate:time_candidate", backend.name, task, sources, shape,
                  baseline="eager", config=TimingConfig(budget_ms=budget_ms), timeout_s=timeout)
    if not r.ok:
        return {"error": f"{r.kind}: {r.error}"}
    m = r.value
    s = m.speedup
    point = (m.roofline or {}).get("candidate") or {}
    return {"candidate_ms": m.candidate.median, "baseline_ms": m.baseline.median if m.baseline else None,
            "baseline": "eager", "speedup": s.point if s else None,
            "speedup_ci": [s.low, s.high] if s else None, "confidence": s.confidence if s else None,
            "roofline_fraction": point.get("fraction"), "bound": point.get("bound"),
            "suspicious": list(m.suspicious), "method": m.method, "pairs": m.reps}


def evaluate_sources(task: Any, backend: Any, sources: dict[str, str], pool: Any, *, preset: str = "strict",
                     scope: str = "full", secret: str | None = None, timeout_s: float = 600.0,
                     time: bool = True, budget_ms: float = 1000.0,
                     timing_shape: dict[str, int] | None = None,
                     progress: Callable[[str], None] | None = None,
                     reveal_hidden: bool = False) -> tuple[Any, dict[str, Any] | None]:
    """Verify ``sources`` (public, then hidden tests) and, when correct, time
    them against eager PyTorch at ``timing_shape`` (default the nominal
    shape; it is verified with the hidden protocol too): ``(evaluation,
    timing)``; the timing dict carries ``shape``. ``kstrata eval`` and
    :func:`evaluate` call this; ``progress`` is told each stage as it starts
    (a line of words: ``kstrata eval``'s status line on a terminal);
    ``reveal_hidden``: a hidden-stage failure names its test (``kstrata eval
    --show-hidden``; only with a secret of this call's own: refused with
    ``secret`` given, so a known secret's hidden shapes are never told).

    Raises
    ------
    kstrata.verify.integrity.registry.UnknownPresetError, kstrata.sandbox.policy.SandboxUnavailable
        For an unknown preset, or no sandbox without ``--unsafe-no-sandbox``.
    """
    from kstrata.verify import verify_candidate

    shape = task.full_shape(timing_shape)
    timed = [shape] if time and getattr(backend, "timing_meaningful", True) else []
    say = progress or (lambda stage: None)
    say(f"verifying: public, then hidden tests ({scope} scope"
        + (f", and the timing shape {', '.join(f'{k}={v}' for k, v in shape.items())})" if timed else ")"))
    if reveal_hidden and secret is not None:
        raise ValueError("--show-hidden names a failing hidden test only under a secret of this call's own; "
                         "drop --secret (a known secret's hidden shapes are never told)")
    ev = verify_candidate(task, backend.name, sources, secret=secret or _secrets.token_hex(16), preset=preset,
                          timeout_s=timeout_s, scope=scope, pool=pool, timed_shapes=timed,
                          reveal_hidden=reveal_hidden)
    timing = None
    if time and ev.correct and (ev.evidence or {}).get("weak_match"):
        timing = {"skipped": "not timed: the output is a fake this task's tests cannot tell from a "
                             "real result (weak task), so no speedup is claimed"}
    elif time and ev.correct:
        say(f"timing against eager PyTorch ({budget_ms:g} ms budget)")
        timing = dict(time_against_eager(pool, backend, task, sources, budget_ms, timeout_s, shape), shape=shape)
        from kstrata.sandbox.idle_cpu import timing_rejection

        rejected = timing_rejection(timing.get("error", "")) if timing.get("error") else None
        if rejected is not None:
            from kstrata.verdict import Verdict

            ev.verdict, ev.check = Verdict.REJECTED, rejected[0]
            ev.evidence = {"message": rejected[1]}
            timing = None
    return ev, timing


def evaluate(task: Any, candidate: str | Path | dict[str, str], backend: str | None = None, *,
             scope: str = "full", preset: str = "strict", secret: str | None = None,
             timeout_s: float = 600.0, time: bool = True, budget_ms: float = 1000.0,
             timing_shape: str = "auto") -> EvalResult:
    """Verify a candidate for ``task`` and time it against eager PyTorch.

    Parameters
    ----------
    task:
        A task (:func:`load_task`) or a suite name / task file path.
    candidate:
        A kernel file, a run's ``best/`` or ``candidates/<hash>`` directory
        (see :func:`read_candidate`), or ``{level: text}`` sources.
    backend:
        Backend name (default: the run's for a run directory, else ``pytorch``).
    scope:
        Hidden shapes: ``full`` (the boundary sweep) or ``small``.
    preset:
        Integrity preset, ``strict`` or ``warn``.
    secret:
        Seeds the hidden tests (default random).
    timeout_s:
        Limit (s) of the candidate's work in the verification (the judge's
        reference and float64 oracle and the sandbox's start do not count;
        the whole verification is bounded by
        :func:`kstrata.verify.api.wall_limit`), and wall-clock limit of the
        timing.
    time:
        Time a correct candidate (paired with eager PyTorch at ``timing_shape``).
    budget_ms:
        Paired timing budget (ms).
    timing_shape:
        ``auto`` (on CPU backends the nominal shape halved to one call of at
        most 0.25 GFLOP / 16 MB, as ``kstrata optimize``; on GPUs nominal),
        ``nominal``, ``fit`` or ``NAME=INT,...``.

    Returns
    -------
    EvalResult

    Raises
    ------
    kstrata.tasks.base.TaskError, FileNotFoundError, ValueError
        For an unknown task, a missing candidate, an unusable backend, scope
        or timing shape (:class:`kstrata.cli.errors.OptionError`, a ValueError).
    kstrata.sandbox.policy.SandboxUnavailable
        When no sandbox can be made (and ``KSTRATA_UNSAFE_NO_SANDBOX`` is unset).
    """
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    t = task if hasattr(task, "digest") else load_task(task)
    if isinstance(candidate, dict):
        sources, name = dict(candidate), backend or "pytorch"
    else:
        sources, name = read_candidate(candidate, backend)
    b = get_backend(name)
    av = b.availability()
    if not av.usable:
        raise ValueError(f"backend {name} is not usable here: {av.reason}")
    if scope not in ("full", "small"):
        raise ValueError(f"unknown scope {scope!r}; choose full or small")
    from kstrata.cli.optimize import _timing_shape

    shape = _timing_shape(timing_shape, t, b, None)
    pool = pool_for(b)
    try:
        ev, timing = evaluate_sources(t, b, sources, pool, preset=preset, scope=scope, secret=secret,
                                      timeout_s=timeout_s, time=time, budget_ms=budget_ms, timing_shape=shape)
    finally:
        pool.close()
    return EvalResult(ev, timing, name, sources)


def optimize(task: Any, backend: str = "tvm-llvm", *, budget: str = "evals=40", proposer: str = "builtin",
             policy: str = "greedy", out: str | Path | None = None, baselines: tuple[str, ...] = ("eager",),
             timing_shape: str = "auto", seed: int = 0, llm: str | None = None, confirm: str = "best") -> Any:
    """Grow a candidate tree for ``task`` on ``backend`` under ``budget`` (as
    ``kstrata optimize``, without the live display) and write the best to
    ``OUT/best/``.

    Parameters
    ----------
    task:
        A task or a suite name / task file path.
    budget:
        ``"evals=40,wall=600,calls=20,..."`` (see ``kstrata optimize --help``).
    proposer:
        ``builtin`` (no LLM), ``llm`` or ``hierarchical`` (with ``llm``).
    out:
        Run directory (default ``runs/<task>-<backend>-<random>``).
    timing_shape:
        ``auto``, ``nominal``, ``fit`` or ``NAME=INT,...``.
    confirm:
        ``best`` (the full protocol verifies each would-be best) or ``end``
        (the run's best, once, when the search stops).

    Returns
    -------
    kstrata.search.loop.RunResult
        ``run_dir``, ``best`` (node with ``speedup``), ``stop_reason``, ``spent``.

    Raises
    ------
    kstrata.tasks.base.TaskError, kstrata.cli.errors.OptionError, kstrata.store.StoreError
        For bad input (one message each).
    """
    from kstrata.agents.registry import make_proposer
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for
    from kstrata.cli.errors import OptionError
    from kstrata.cli.optimize import _budget, _timing_shape
    from kstrata.sandbox.policy import require
    from kstrata.search.evaluators import VerifyMeasureEvaluator
    from kstrata.search.loop import SearchSettings
    from kstrata.search.loop import optimize as search
    from kstrata.store.secret import run_secret

    if confirm not in ("best", "end"):
        raise OptionError(f"confirm={confirm!r}: choose 'best' or 'end'")
    t = task if hasattr(task, "digest") else load_task(task)
    b = get_backend(backend)
    av = b.availability()
    if not av.usable:
        raise OptionError(f"backend {backend} is not usable here: {av.reason}")
    require()
    run_dir = Path(out) if out else Path("runs") / f"{t.name}-{backend}-{_secrets.token_hex(3)}"
    budget_obj = _budget(budget, None)
    shape = _timing_shape(timing_shape, t, b, None)
    prop = make_proposer(proposer, backend=b, llm=llm)
    pool = pool_for(b)
    try:
        evaluator = VerifyMeasureEvaluator(secret=run_secret(run_dir), baselines=tuple(baselines), shape=shape,
                                           pool=pool, confirm_at=confirm)
        return search(t, b, prop, evaluator, policy=policy, budget=budget_obj, run_dir=run_dir,
                      settings=SearchSettings(seed=seed),
                      extra_config={"cli": {"baselines": list(baselines), "proposer": proposer, "llm": llm,
                                            "executor": "local", "ablate": "", "timing_shape": shape}})
    finally:
        pool.close()


def export(run_dir: str | Path, to: str | Path, candidate: str | None = None, shape: str = "timed",
           unranked: bool = False) -> Path:
    """Write a run's best candidate (or ``candidate``) as an importable module
    in ``to``, a static TVM build at ``shape`` (``timed``: the run's timing
    shape, where its speedup was measured; ``nominal``; ``NAME=INT,...``);
    ``unranked`` exports a best that nothing ranked (every timing untrusted),
    which is refused otherwise; see :func:`kstrata.cli.export.export_run`.
    Returns ``to``."""
    from kstrata.cli.export import export_run

    return export_run(run_dir, to, candidate, shape, unranked)
