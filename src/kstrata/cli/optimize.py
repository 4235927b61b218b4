"""``kstrata optimize``, ``kstrata tree`` and ``kstrata show``: the main job and
its views."""

from __future__ import annotations

import os
import secrets
from functools import partial
from pathlib import Path
from typing import Any

import typer
from rich.live import Live
from rich.text import Text

from kstrata.cli.errors import Console, OptionError, check_number, check_seed, err_console, user_errors
from kstrata.shellarg import arg, resume_command

console = Console()

#: ``--budget`` of a new run when none is given
DEFAULT_BUDGET = "evals=40"


#: ``--timing-shape`` of optimize and bench
TIMING_SHAPE_HELP = ("Shape candidates and baselines are timed at: auto (fit on CPU backends, nominal on GPUs), "
                     "nominal, fit (the nominal shape halved until one call is at most 0.25 GFLOP and 16 MB), or "
                     "NAME=INT,... Verification always covers the task's own shapes.")


def _timing_shape(option: str, task: Any, backend: Any, resume: Path | None) -> dict[str, int]:
    """The ``--timing-shape`` as a full shape; a resumed run keeps the shape it started with.

    Raises
    ------
    OptionError
        On a malformed value or a task without FLOP/byte formulas to fit by.
    kstrata.store.StoreError
        When a resumed run's stored shape names a size the task does not have.
    """
    import json

    from kstrata.tasks.base import TaskError
    from kstrata.tasks.scaling import ShapeFitError, timing_shape_for

    def parse(text: str) -> dict[str, int]:
        try:
            return timing_shape_for(text, task, getattr(backend, "device", "cpu"))
        except TaskError:  # the task file's fault (a flops formula with no value), not the option's
            raise
        except (ValueError, ShapeFitError) as e:
            raise OptionError(f"--timing-shape: {e}") from None

    if resume is not None and (resume / "run.db").is_file():
        from kstrata.store.run_store import RunStore

        with RunStore.open(resume) as store:
            stored = (store.config.get("cli") or {}).get("timing_shape")
        if stored:
            shape = {k: int(v) for k, v in (json.loads(stored) if isinstance(stored, str) else stored).items()}
            try:  # names and sizes of this task (run.db is a file anyone can edit; its kinds are checked on read)
                timing_shape_for(",".join(f"{k}={v}" for k, v in shape.items()), task, getattr(backend, "device", "cpu"))
            except (ValueError, ShapeFitError) as e:
                from kstrata.store.run_store import StoreError

                raise StoreError(f"{resume / 'run.db'} is damaged: its timing shape does not fit the task ({e}); "
                                 "start a new run with --out, or restore the file") from None
            if option != "auto":
                asked = parse(option)
                if asked != shape:
                    raise OptionError(f"--timing-shape: {resume} was timed at "
                                      f"{', '.join(f'{k}={v}' for k, v in shape.items())}; a resumed run keeps "
                                      "its timing shape (drop --timing-shape, or start a new run with --out)")
            return shape
    return parse(option)


def _absolute_llm(llm: str) -> str:
    """``--llm`` with the file of ``queue:PATH``/``replay:PATH`` made
    absolute, so the printed ``--resume`` command works from any folder."""
    kind, sep, path = llm.partition(":")
    if sep and kind in ("queue", "replay") and path:
        return f"{kind}:{Path(path).resolve()}"
    return llm


def parse_budget(text: str) -> dict[str, float | int]:
    """``"evals=30,wall=600"`` -> ``{"evaluations": 30, "wall_clock_s": 600}``
    (:func:`kstrata.search.budget.parse_budget`, which ``kstrata bench`` uses too).

    Raises
    ------
    OptionError
        For a malformed item, an unknown or repeated key, or a value that is
        not a finite, non-negative number (a whole one for counts).
    """
    from kstrata.search import budget as _budget_mod

    try:
        return _budget_mod.parse_budget(text)
    except _budget_mod.BudgetError as e:
        raise OptionError(str(e)) from None


def _run_settings(resume: Path | None, proposer: str | None, llm: str | None,
                  baselines: str | None) -> tuple[str, str | None, str]:
    """``--proposer``, ``--llm`` and ``--baselines`` as given, else a resumed
    run's own (its ``config.json`` ``cli`` settings), else the defaults
    (``builtin``, none, ``eager``). Newcomer nc16: the resume command printed
    after interrupting an LLM run named none of them, and a resume without
    them went on with the built-in proposer. An ``--llm`` is restored only
    with the run's own proposer."""
    stored: dict[str, Any] = {}
    if resume is not None:
        from kstrata.store.run_store import RunStore

        with RunStore.open(resume) as store:
            stored = store.config.get("cli") or {}
    if proposer is None and stored.get("proposer"):
        proposer = str(stored["proposer"])
        llm = llm or stored.get("llm")
    if baselines is None and stored.get("baselines"):
        baselines = ",".join(map(str, stored["baselines"]))
    return proposer or "builtin", llm, "eager" if baselines is None else baselines


def _budget(option: str | None, resume: Path | None) -> Any:
    """The run's :class:`~kstrata.search.budget.Budget`: ``--budget`` when given,
    else a resumed run's stored budget, else :data:`DEFAULT_BUDGET`."""
    from kstrata.search.budget import Budget

    if option is None and resume is not None:
        from kstrata.store.run_store import RunStore

        with RunStore.open(resume) as store:
            stored = store.config.get("budget")
        if stored:
            return Budget.from_dict(stored)
    # a limit not given keeps the default's (newcomer nc14: --budget wall=60 ran with evals=100, the
    # Budget class's own default, while --help said evals=40)
    return Budget.from_dict({**parse_budget(DEFAULT_BUDGET), **parse_budget(option or DEFAULT_BUDGET)})


def _check_total(budget: Any, run_dir: Path, option: str) -> None:
    """Refuse a ``--budget`` on ``--resume`` whose evaluations are fewer than the
    run has spent: it is the run's total (README), so nothing would run, and
    the run's summary would be rewritten with a limit it never had (newcomer nc17).

    Raises
    ------
    OptionError
        Naming what the run has spent and a total that would continue it.
    """
    from kstrata.cli.errors import OptionError
    from kstrata.store.run_store import RunStore

    if budget.evaluations is None:
        return
    with RunStore.open(run_dir) as store:
        done = int(store.spent().get("evaluations", 0))
    if done >= budget.evaluations:
        raise OptionError(f"--budget {option}: the budget on --resume is the run's total, and this run has "
                          f"already spent {done} evaluations; give more to continue it (e.g. evals="
                          f"{done + max(4, done // 2)}), or leave it as it is")


def _precheck_out(run_dir: Path) -> None:
    """What :func:`_check_out` refuses that needs nothing created: a file, the
    user's own folder, or a path under no writable directory. Called before
    the task and backend load (the lead's option battery: ``--out FILE`` and
    ``--out /proc/x`` were said after 45 s or more of that work); creates
    nothing, so a refused run leaves no folder.

    Raises
    ------
    OptionError
        ``--out PATH: ...`` with what is wrong and what to give instead.
    """
    from kstrata.cli.errors import OptionError

    if run_dir.exists() and not run_dir.is_dir():
        raise OptionError(f"--out {run_dir}: exists and is not a directory; give a new directory path "
                          "(or an empty directory)")
    if (run_dir / "run.db").exists():
        return  # a run is there: refused later, naming it and who uses it (newcomer nc25)
    from kstrata.store.run_store import foreign_folder

    foreign = foreign_folder(run_dir)  # never write a run among the user's own files (as export refuses)
    if foreign:
        raise OptionError(f"--out {run_dir}: {foreign}")
    base = run_dir.absolute()
    while not base.exists():
        base = base.parent
    if not base.is_dir() or not os.access(base, os.W_OK | os.X_OK):
        raise OptionError(f"--out {run_dir}: the run directory cannot be created ({base} is not a writable "
                          "directory); give a path in a writable directory")


def _check_out(run_dir: Path) -> None:
    """Refuse a run directory that is a file or cannot be created, before any work.

    Raises
    ------
    OptionError
        ``--out PATH: ...`` with what is wrong and what to give instead.
    """
    from kstrata.cli.errors import OptionError

    _precheck_out(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OptionError(f"--out {run_dir}: the run directory cannot be created ({e.strerror or e}); "
                          "give a path in a writable directory") from None


def _check_text_options(proposer: str, initial: Path | None, timing_shape: str, resume: Path | None) -> None:
    """Refuse what ``--proposer``, ``--initial`` and ``--timing-shape`` say
    wrong by their text alone, before the task, torch and the backend load
    (newcomer nc18: each such error came after 20-29 s on a busy machine).
    What needs the task (a shape variable's name, the file's contents) is
    checked where it is used.

    Raises
    ------
    OptionError
        For an unknown proposer, a missing ``--initial`` path, ``--initial``
        with ``--resume``, or a ``--timing-shape`` that is neither ``auto``,
        ``nominal``, ``fit`` nor ``NAME=INT,...``.
    """
    from kstrata.agents.registry import NAMES

    if proposer not in NAMES:
        raise OptionError(f"unknown --proposer {proposer!r}; choose one of {', '.join(NAMES)}")
    if initial is not None and resume is not None:
        raise OptionError("--initial starts a new run; a resumed run keeps its root")
    if initial is not None and not initial.exists():
        raise OptionError(f"--initial {initial}: no such file or directory")
    check_shape_text(timing_shape)


def check_shape_text(timing_shape: str) -> None:
    """Refuse a ``--timing-shape`` wrong by its text alone (not ``auto``,
    ``nominal``, ``fit`` nor ``NAME=INT,...``; a size below 1; a variable
    given twice), before the task and torch load: optimize, eval and bench
    (newcomer nc22: ``B=0`` was refused after 44 s).

    Raises
    ------
    OptionError
        Naming the item and what to give."""
    text = timing_shape.strip()
    if text not in ("", "auto", "nominal", "fit"):
        seen = set()
        for item in text.split(","):
            key, sep, value = item.partition("=")
            if not sep or not key.strip().isidentifier() or not value.strip().lstrip("-").isdigit():
                raise OptionError(f"--timing-shape: shape item {item!r} is not NAME=INT (or use 'auto', "
                                  "'nominal' or 'fit')")
            if int(value) < 1:
                raise OptionError(f"--timing-shape: shape item {item!r}: sizes must be at least 1")
            if key.strip() in seen:
                raise OptionError(f"--timing-shape: shape item {item!r}: {key.strip()} is given twice; give each "
                                  "variable once")
            seen.add(key.strip())


def _early_shape_names(task_arg: str, timing_shape: str) -> None:
    """:func:`check_shape_names` on the task read as text (its metadata and size
    globals; nothing run), before :func:`kstrata.tasks.loader.resolve_task`
    runs its reference, which for a plain KernelBench file fits the shapes the
    CPU verifies at (newcomer nc28: ``--timing-shape X=4`` was refused after
    70 s at load 19). A task that cannot be read so is left to the full load,
    whose error is the one to give.

    Raises
    ------
    OptionError
        As :func:`check_shape_names`."""
    text = timing_shape.strip()
    if text in ("", "auto", "nominal", "fit"):
        return
    from kstrata.tasks.base import TaskError
    from kstrata.tasks.loader import load_task, suite

    path = Path(task_arg)
    if path.suffix == ".py" or path.is_file():
        try:
            light = load_task(path, check_import=False)
        except (TaskError, OSError, ValueError, SyntaxError):
            return
    else:  # the suite's tasks are read as text, their modules imported only when used
        light = next((t for t in suite() if t.name == task_arg), None)
        if light is None:
            return
    check_shape_names(timing_shape, light)


def check_shape_names(timing_shape: str, task: Any) -> None:
    """Refuse a ``--timing-shape`` variable the task does not have, as soon as
    the task is loaded (before the backend, the sandbox and the proposer;
    newcomer nc22: ``Q=5`` was refused after 25 s).

    Raises
    ------
    OptionError
        Naming the task's variables."""
    text = timing_shape.strip()
    if text in ("", "auto", "nominal", "fit"):
        return
    names = task.full_shape(None)
    for item in text.split(","):
        key = item.partition("=")[0].strip()
        if key not in names:
            raise OptionError(f"--timing-shape: task {task.name} has no shape variable {key!r}; it has "
                              f"{', '.join(names)}")


def _initial(option: Path | None, task: Any, backend: Any, resume: Path | None) -> dict[str, str] | None:
    """The root's sources: ``--initial`` (:data:`INITIAL_HELP` says what it
    takes), else the backend's shipped start; ``None`` on resume (the run has
    its root). A file is read as text, never imported (its syntax is checked
    in a child process, :func:`kstrata.cli.import_.read_model_file`).

    Raises
    ------
    OptionError
        For an unreadable or unsuitable file (a missing one, and one given
        with ``--resume``, :func:`_check_text_options` refuses before), or
        no ``--initial`` where the backend ships no start for the task.
    """
    from kstrata.api import import_meta, import_sources, read_candidate, read_sources_json
    from kstrata.cli.import_ import DSL_MODULE, read_kernel_file, read_model_file
    from kstrata.tasks.base import TaskError

    if resume is not None:  # --initial with --resume, and a missing --initial, were refused by _check_text_options
        return None
    if option is None:
        try:
            return backend.initial_sources(task)
        except NotImplementedError as e:
            raise OptionError(str(e)) from None
    if (option / "candidate.json").is_file():
        try:
            meta = import_meta(option)
        except ValueError as e:
            raise OptionError(f"--initial: {e}") from None
        if meta.get("backend") not in (None, backend.name) and \
                DSL_MODULE.get(meta.get("backend")) != DSL_MODULE.get(backend.name):
            raise OptionError(f"--initial {option}: a candidate for {meta.get('backend')}, not {backend.name}")
        try:
            sources = import_sources(option, meta)
        except ValueError as e:
            raise OptionError(f"--initial {option}: {e}") from None
    elif option.is_dir() or (len(backend.levels) > 1 and option.is_file() and option.stem in backend.levels):
        # a run's best/ or candidates/<hash>/: its level files; one of them (best/graph.py) reads the whole folder,
        # as kstrata eval takes it (newcomer nc26: eval took best/graph.py, --initial refused it)
        try:
            sources, _ = read_candidate(option, backend.name)
        except (FileNotFoundError, ValueError) as e:
            raise OptionError(f"--initial: {e}") from None
    elif option.suffix == ".json":
        try:
            sources = read_sources_json(option)
        except ValueError as e:
            raise OptionError(f"--initial {e}") from None
    elif backend.name in DSL_MODULE or tuple(backend.levels) == ("source",):
        try:  # a one-file candidate: a Triton/TileLang kernel file, or a PyTorch ModelNew file
            sources = {"source": read_kernel_file(option, backend.name) if backend.name in DSL_MODULE
                       else read_model_file(option, "file")}
        except TaskError as e:
            raise OptionError(f"--initial: {e}") from None
    else:
        raise OptionError(f"--initial {option}: a {backend.name} candidate has the levels "
                          f"{', '.join(backend.levels)}, not one file: give a run's best/ or "
                          f"candidates/<hash>/ directory, or a JSON file of {{level: source text}}")
    unknown = sorted(set(sources) - set(backend.levels))
    if not sources or unknown:
        raise OptionError(f"--initial {option}: levels {unknown or '(none)'} are not levels of "
                          f"{backend.name} ({', '.join(backend.levels)})")
    return sources


def _interpreter_notes(task: Any, backend: Any, evaluator: Any, start: dict[str, str] | None = None) -> None:
    """Before a run on an interpreter backend: how long its verifications may
    take when that is long (:func:`kstrata.verify.interp_cost.slow_note`): the
    screening of every candidate, and the full-scope confirmation of a best,
    said as the run will make it (:func:`confirm_words`; ``start``: the new
    run's starting sources, None on ``--resume``)."""
    from kstrata.verify.interp_cost import plan_bytes, slow_note

    screen, confirm = evaluator.scope, evaluator.confirm_scope
    confirms = bool(confirm) and confirm != screen
    what = f"screening each candidate (scope {screen}"
    if screen == "small":  # what the scopes hold, so that their test counts read consistently (newcomer nc15)
        what += (": the task's small shapes, perturbed small shapes and the sweep's shapes that cost no "
                 "more than the small ones")
        try:
            counts = [plan_bytes(task, scope) for scope in (screen, confirm)] if confirms else []
        except Exception:  # noqa: BLE001 - an estimate that cannot be made says nothing
            counts = []
        if len(counts) == 2 and None not in counts and counts[0][0] > counts[1][0]:
            what += (f"; here more tests than the {confirm} scope's {counts[1][0]}, since this task's sweep "
                     "shapes, the full scope's hidden base, are no larger than its small shapes, which the "
                     "screening adds")
    notes = [slow_note(task, backend, screen, what=what + ")", scope_option=None)]
    if confirms:
        notes.append(slow_note(task, backend, confirm, scope_option=None,
                               what=f"the {confirm}-scope verification"
                                    + (" (the sweep's shapes and perturbed sweep shapes)" if confirm == "full" else "")
                                    + confirm_words(task, backend, start)))
    for note in filter(None, notes):
        err_console.print(f"warning: {note}", markup=False, highlight=False, soft_wrap=True)


def confirm_words(task: Any, backend: Any, start: dict[str, str] | None) -> str:
    """When and whether a run confirms its best at the full scope, as the start-of-run
    note says it (after "the full-scope verification"): on a backend that times
    something, each would-be best (once at the end with ``--confirm end``); on one
    that times nothing (an interpreter) no best arises during the search, so only
    at the end, and not at all for a best that is the ``--initial`` start
    (:func:`kstrata.search.loop.start_left_to_export`): left to ``kstrata export``
    (newcomer nc27: the note promised a confirmation that the run then left out)."""
    from kstrata.search.loop import start_left_to_export

    if getattr(backend, "timing_meaningful", True):
        return " that confirms the run's best (each would-be best; with --confirm end, once at the end)"
    untimed = f"nothing is timed on {backend.name}, so no best arises during the search"
    if start_left_to_export(backend, task, start):
        return (f" of the run's best (made at the end of the run only for a best the search made: {untimed}, "
                "and a correct --initial start stays the best, its full-scope check left to `kstrata export` "
                "or `kstrata eval --scope full`)")
    return f" that confirms the run's best (once, at the end of the run: {untimed})"


#: ``--initial``'s help (README, "Commands", says the same).
INITIAL_HELP = ("Start from this candidate instead of the backend's shipped kernel for the task. A "
                "one-file candidate for pytorch, pytorch-cuda, triton, triton-interp and tilelang-* (a "
                "KernelBench-format .py file defining ModelNew, as `kstrata eval` takes; for Triton/TileLang "
                "it imports the DSL); for any backend a run's best/ or candidates/<hash>/ directory (or one of "
                "its level files, e.g. best/graph.py), a "
                "`kstrata import` directory, or a JSON file {level: source text} (tvm-*: graph, schedule, "
                "source). The built-in proposer tunes a Triton/TileLang start over its `# kstrata-tune:` "
                "choices, e.g. `SCHEDULE = {\"rpb\": 1}  # kstrata-tune: rpb in {1, 2, 4}` (TileLang) or "
                "`BLOCK = 1024  # kstrata-tune: {256, 512, 1024}` (Triton); README, \"Tuning parameters\".")


def progress_best(tree: Any) -> str:
    """The progress line's best: the run's best (:meth:`CandidateTree.best_correct`,
    what the summary will name) with its speedup when its timing is trusted,
    else ``no ranked candidate yet``: a candidate whose timing was not
    believed is never shown as the best (the final round re-times those at
    the end of the run). ``no correct candidate yet`` before any is correct.
    A best the search verified at its screening scope only (``--confirm end``,
    or its confirmation not reached yet) says ``screened only``, as the end
    table's 'not verified' line does (newcomer nc22: the progress line called
    such a best plainly 'best')."""
    from kstrata.search.views import reading

    best = tree.best_correct() if tree is not None else None
    if best is None:
        return "no correct candidate yet"
    if not best.timing_trusted:
        unranked = sum(1 for n in tree if n.correct and not n.timing_trusted)
        return f"no ranked candidate yet ({unranked} correct, timing not trusted yet)"
    screened = ", screened only" if best.reduced_scope else ""
    r = reading(best)  # the reading tree, show and the summary show
    if r is None:  # e.g. triton-interp: correctness only, no timing
        return f"best {best.hash[:8]} ({best.level or 'initial'}{screened}; correct, not timed)"
    return f"best {r.value:.2f}x ({best.hash[:8]}, {best.level or 'initial'}" + \
        (", re-timed" if r.retimed else "") + f"{screened})"


def _check_tune_markers(sources: dict[str, str], backend: Any, initial: Path | None) -> None:
    """Before a built-in search on ``triton*``/``tilelang-*``: refuse a start
    whose ``# kstrata-tune:`` marker the tuner cannot read (it was ignored, and
    the search stopped after the start without a word of the line: newcomer
    nc15), and warn when a TileLang start declares no choices (the search then
    only verifies and times it). Read with regular expressions only.

    Raises
    ------
    OptionError
        Naming each unreadable marker's line and the syntax.
    """
    family = backend.name.split("-")[0]
    if family not in ("triton", "tilelang") or "source" not in sources:
        return
    if family == "triton":
        from kstrata.backends.triton.tune_rules import malformed
    else:
        from kstrata.backends.tilelang.tune_rules import malformed
    where = f"--initial {initial}" if initial is not None else "the start"
    bad = malformed(sources["source"])
    if bad:
        raise OptionError(f"{where}: the built-in tuner cannot read its `# kstrata-tune:` marker: "
                          + "; ".join(bad) + " (README, \"Tuning parameters\")")
    if family == "tilelang":
        from kstrata.backends.tilelang.tune_rules import SYNTAX, declared

        if not declared(sources["source"], getattr(backend, "target", "")):
            err_console.print(
                f"warning: {where} declares no `# kstrata-tune:` choices for target "
                f"{getattr(backend, 'target', '')!r} on its SCHEDULE line, so the built-in proposer has nothing "
                f"to tune: the run will verify and time the start only. Add them at the end of that line, e.g. "
                f"`{SYNTAX}` (README, \"Tuning parameters\"), or use --proposer llm",
                markup=False, highlight=False, soft_wrap=True)


def _check_resume(run_dir: Path, task: Any, backend: Any) -> None:
    """Refuse ``--resume RUN_DIR`` for another task or backend than the run's
    before anything is printed (the search checks again; newcomer nc15: it
    printed "resuming: 5 of 5 evaluations done" first, then refused).

    Raises
    ------
    kstrata.store.StoreError
        When ``run_dir`` holds no run, or one of another task or backend (the
        message names the run's and says how to resume it).
    """
    from kstrata.search.loop import other_run
    from kstrata.store.run_store import RunStore, StoreError

    with RunStore.open(run_dir) as store:
        old = store.config
    was_task = old.get("task")
    if not isinstance(was_task, dict) or not was_task.get("digest") or not old.get("backend"):
        return  # a config that names no task or backend: the search's own check decides, after the secret's
    mismatch = other_run(old, task, backend, run_dir)
    if mismatch:
        raise StoreError(mismatch)


def resuming_line(run_dir: Path, budget: Any) -> str:
    """``resuming: 5 of 12 evaluations done, 4 candidates (3 correct)``: where a
    resumed run stands before its first new evaluation (the budget is the run's
    total, so the count says what is left)."""
    from kstrata.store.run_store import RunStore

    with RunStore.open(run_dir) as store:
        spent = store.spent()
        cands = store.candidates()
    done = int(spent.get("evaluations", 0))
    limit = budget.evaluations
    correct = sum(1 for c in cands if getattr(c.evaluation, "verdict", None) == "correct")
    of = "" if limit is None else f" of {int(limit)}"
    return f"resuming: {done}{of} evaluations done, {len(cands)} candidates ({correct} correct)"


def _report_proposer_errors(run_dir: Path) -> None:
    """Say so when proposer calls failed (e.g. a replay cassette that does not
    match this run), instead of leaving it in the store only."""
    from kstrata.llm.cassette import NEAREST_MARK
    from kstrata.store.run_store import RunStore

    with RunStore.open(run_dir) as store:
        calls = store.proposer_calls()
        unusable = [e.error or "" for e in store.expansions() if e.n_malformed]
    errors = [c["error"] for c in calls if c.get("error")]
    near = [c["provider"] for c in calls if NEAREST_MARK in str(c.get("provider") or "")]
    if near:
        console.print(f"[yellow]note:[/] {len(near)} of {len(calls)} replayed call(s) had no recorded prompt and got "
                      f"the answer to the {NEAREST_MARK} of the same role (this run's prompts differ from the recorded "
                      "ones: e.g. another verification scope or budget than the recording's, or timings on this "
                      f"machine that steered the search elsewhere); the first: {near[0]}", highlight=False)
    if errors:
        console.print(f"[yellow]warning:[/] {len(errors)} proposer call(s) failed; the first: {errors[0]}",
                      highlight=False)
    if unusable:  # newcomer nc18: an answer whose edit did not apply spent the call without a word
        from rich.markup import escape

        said = [u for u in unusable if u.startswith("malformed proposals")]  # else a decline followed them
        first = f"; the first: {escape(' '.join(said[0].split())[:400])}" if said else \
            "; the model declined after them (`kstrata tree` shows the decline)"
        console.print(f"[yellow]warning:[/] {len(unusable)} expansion(s) had answers the proposer could not use "
                      f"(it could not apply what the model sent){first}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``optimize``, ``tree`` and ``show`` to ``app``."""

    @app.command("optimize")
    def optimize_cmd(
        task: str = typer.Argument(..., metavar="TASK", help="Suite task name or a task file's path."),
        backend: str = typer.Option("tvm-llvm", "--backend", "-b", help="Backend (see `kstrata env`)."),
        policy: str = typer.Option("greedy", "--policy", help="greedy, beam, uct or map-elites."),
        budget: str | None = typer.Option(None, "--budget", help=f"Limits, e.g. evals=40,wall=600,calls=20,tokens_out=50000,patience=10 ({DEFAULT_BUDGET} unless given; on --resume, the run's own budget, as its total). Each is checked before a step starts: a step under way (a verification, a tuning, the final round that re-times and confirms the best) finishes, so wall= can be passed by that step's time."),
        proposer: str | None = typer.Option(None, "--proposer", help="builtin (rules + autotuner, no LLM; the default), llm, or hierarchical (graph/schedule/source agents behind a router); on --resume, the run's own (with its --llm and --baselines) unless given."),
        ablate: str = typer.Option("", "--ablate", help="With --proposer hierarchical: parts to switch off, e.g. flat,linear,unrouted,no-memory,no-lookahead."),
        memory: Path | None = typer.Option(None, "--memory", "--db", help="With --proposer hierarchical: the memory database (default $KSTRATA_MEMORY_DB or ~/.cache/kstrata/memory.db)."),
        llm: str | None = typer.Option(None, "--llm", help="LLM provider for --proposer llm: openai:MODEL, anthropic:MODEL, queue:DIR, replay:FILE or a name from kstrata.toml."),
        record: Path | None = typer.Option(None, "--record", help="Write a cassette of every LLM exchange to this file."),
        config: Path | None = typer.Option(None, "--config", help="kstrata.toml (default: ./kstrata.toml if present)."),
        baselines: str | None = typer.Option(None, "--baselines", help="Comma-separated baselines to time against: eager (the default), compile, metaschedule. The first is the one searched on; on --resume, the run's own unless given."),
        out: Path | None = typer.Option(None, "--out", help="Run directory (default runs/<task>-<backend>-<time>)."),
        resume: Path | None = typer.Option(None, "--resume", help="Resume the run in this directory."),
        seed: int = typer.Option(0, "--seed", help="Seed of the policy and proposer."),
        lookahead: int = typer.Option(2, "--lookahead", help="Schedule-level expansions granted to a slower graph-level change before it is judged (0 = off)."),
        timing_shape: str = typer.Option("auto", "--timing-shape", help=TIMING_SHAPE_HELP),
        initial: Path | None = typer.Option(None, "--initial", help=INITIAL_HELP),
        confirm: str = typer.Option("best", "--confirm", help="When the full hidden protocol verifies the best: best (each would-be best, before it counts) or end (the run's best, once, when the search stops; cheaper where that verification is long, e.g. 4096x4096 tasks on a GPU)."),
        executor: str = typer.Option("local", "--executor", help="Where candidates are verified and timed: local (a worker process here) or ray[:ADDRESS] (Ray tasks, one candidate per GPU; ADDRESS host:port, ray://host:port or auto)."),
    ) -> None:
        """Grow a tree of candidates for TASK on BACKEND under a budget; write the best."""
        from kstrata.execute.select import ExecutorSpecError, make_executor, parse_executor

        with user_errors():
            check_number("--lookahead", lookahead, strict=False)
            check_seed("--seed", seed)
            if confirm not in ("best", "end"):
                raise OptionError(f"--confirm {confirm!r}: choose best or end")
            # Options checked by text first: a typo costs no torch/TVM import (seconds on a busy machine).
            from kstrata.search.policies import POLICIES

            if policy.replace("_", "-") not in POLICIES:
                raise OptionError(f"unknown --policy {policy!r}; choose one of {', '.join(sorted(POLICIES))}")
            if resume is not None and not (resume / "run.db").is_file():
                raise OptionError(f"--resume {arg(resume)}: no run there (no run.db); start one with --out")
            budget_obj = _budget(budget, resume)
            if budget is not None and resume is not None:
                _check_total(budget_obj, resume, budget)
            llm_given = llm
            proposer, llm, baselines = _run_settings(resume, proposer, llm, baselines)
            if llm_given and proposer == "builtin":  # newcomer nc17: it was ignored without a word
                raise OptionError(f"--llm {arg(llm_given)} is read by --proposer llm or hierarchical only, and this "
                                  "run's proposer is builtin (rules and the autotuner, no LLM); add --proposer llm, "
                                  "or drop --llm")
            if (ablate or memory) and proposer != "hierarchical":
                raise OptionError("--ablate and --memory need --proposer hierarchical")
            try:
                parse_executor(executor)
            except ExecutorSpecError as e:
                raise OptionError(str(e)) from None
            _check_text_options(proposer, initial, timing_shape, resume)
            if resume is None and out is not None:
                _precheck_out(out)
            if config is not None:  # read by the LLM proposers only: a bad file was ignored by the others
                from kstrata.config import load_config

                load_config(config)
            from kstrata.backends.registry import entry, get_backend

            entry(backend)  # an unknown name is refused before torch loads
            from kstrata.agents.registry import check_llm_options, make_proposer
            from kstrata.measure.baseline_names import check_baselines

            check_llm_options(proposer, llm, config, ablate)  # before the task, backend and start load
            try:  # each known, at least one (newcomer nc16: foo was dropped silently, or a run started on it)
                names = check_baselines(tuple(x.strip() for x in baselines.split(",") if x.strip()), backend)
            except ValueError as e:
                raise OptionError(str(e)) from None
            from kstrata.backends.workers import pool_for
            from kstrata.search.evaluators import VerifyMeasureEvaluator
            from kstrata.search.loop import SearchSettings, optimize
            from kstrata.search.views import next_steps, result_table
            from kstrata.store.secret import run_secret
            from kstrata.tasks.loader import resolve_task

            _early_shape_names(task, timing_shape)
            t = resolve_task(task)
            check_shape_names(timing_shape, t)
            b = get_backend(backend)
            av = b.availability()
            if not av.usable:
                raise OptionError(f"backend {backend} is not usable here: {av.reason}")
            from kstrata.sandbox.policy import require

            require()  # candidates (and LLM answers) run only sandboxed, unless --unsafe-no-sandbox
            run_dir = resume or out or Path("runs") / f"{t.name}-{backend}-{secrets.token_hex(3)}"
            if resume is not None:
                _check_resume(resume, t, b)
                from kstrata.store.lock import check_free

                check_free(resume, "kstrata optimize")  # a second writer of the run is refused at once
            root = _initial(initial, t, b, resume)
            if proposer == "builtin" and root is not None:
                _check_tune_markers(root, b, initial)
            if resume is None and (run_dir / "run.db").exists():
                from kstrata.store.lock import in_use_by

                who = in_use_by(run_dir)  # newcomer nc25: said only after a --resume that was refused again
                if who is not None:
                    raise OptionError(f"{run_dir} already holds a run, and it is in use by {who} now: wait for "
                                      f"that to finish or stop it, then continue the run with --resume "
                                      f"{arg(run_dir)}, or choose another --out")
                raise OptionError(f"{run_dir} already holds a run; pass --resume {arg(run_dir)} to continue it")
            extra = {"ablations": ablate, "memory": memory} if proposer == "hierarchical" else {}
            prop = make_proposer(proposer, backend=b, llm=llm, record=record, config=config, **extra)
            settings = SearchSettings(seed=seed, lookahead_expansions=lookahead)
            policy_arg, router = policy, getattr(prop, "router", None)
            if hasattr(prop, "policy"):  # the LLM proposers: open levels they can edit, repeat expansions
                policy_arg, settings = prop.policy(policy), prop.settings(settings)
            shape = _timing_shape(timing_shape, t, b, resume)
            if resume is None:  # after the options that can still be wrong: a refused run leaves no folder
                _check_out(run_dir)
            try:
                kind, _ = parse_executor(executor)
                pool = pool_for(b) if kind == "local" else make_executor(executor, backend=b)
            except ExecutorSpecError as e:
                raise OptionError(str(e)) from None
            where = {"pool": pool} if kind == "local" else {"executor": pool}
            evaluator = VerifyMeasureEvaluator(secret=run_secret(run_dir), baselines=names, shape=shape,
                                               confirm_at=confirm, **where)
            status = Text("starting")

            def progress(event: str, info: dict) -> None:
                tree, spent = info.get("tree"), info.get("spent", {})
                left = budget_obj.left(spent)
                parts = [f"evaluated {int(spent.get('evaluations', 0))}", progress_best(tree)]
                parts.append("left " + ", ".join(f"{k}={v:g}" for k, v in left.items() if v is not None))
                status.plain = " · ".join(parts + (["stopped"] if event == "stopped" else []))
                if not console.is_terminal and event in ("evaluated", "stopped"):
                    print(status.plain, flush=True)  # a live line only redraws on a terminal

            from kstrata.backends.pytorch_cuda import device_line

            console.print(device_line(b), markup=False, highlight=False)
            from kstrata.cli.progress import Heartbeat

            console.print(f"run directory: {run_dir}", highlight=False, soft_wrap=True)
            if resume is not None:
                console.print(resuming_line(resume, budget_obj), highlight=False, soft_wrap=True)
            _interpreter_notes(t, b, evaluator, root)
            waiting = None
            if proposer != "builtin" and (llm or "").startswith("queue:"):  # name the request file to answer
                from kstrata.llm.file_queue import waiting_text

                waiting = partial(waiting_text, Path(llm.removeprefix("queue:")))
            beat = Heartbeat(status, None if console.is_terminal else (lambda line: print(line, flush=True)),
                             line_events=("evaluated", "stopped"),  # the events progress() prints off a terminal
                             waiting=waiting, backend=b.name)
            progress = beat.wrap(progress)
            from kstrata.cli.signals import exit_status, interrupted_word, sigterm_as_interrupt

            # how to continue the run (interrupted, or on a full disk); --resume restores the proposer,
            # --llm and --baselines: said anyway
            said = f" --proposer {arg(proposer)}" + (f" --llm {arg(_absolute_llm(llm))}" if llm else "") \
                if proposer != "builtin" else ""
            again = resume_command(task, backend, run_dir, said)  # pasteable from any folder
            try:
                # off a terminal the progress lines are printed; a Live would print its last one again
                with sigterm_as_interrupt(), \
                        Live(status, console=console, transient=not console.is_terminal, refresh_per_second=4), beat:
                    result = optimize(
                        t, b, prop, evaluator, policy=policy_arg, budget=budget_obj, run_dir=run_dir,
                        resume=resume is not None, settings=settings, progress=progress, router=router,
                        initial_sources=root,
                        extra_config={"cli": {"baselines": list(names), "proposer": proposer, "llm": llm,
                                             "executor": executor, "ablate": ablate,
                                             "timing_shape": shape}},
                    )
                learned = prop.learn(result.tree) if hasattr(prop, "learn") else None
            except KeyboardInterrupt as exc:
                console.print(f"\n{interrupted_word(exc)}; the run is kept. Continue it with:\n  {again}",
                              highlight=False, markup=False, soft_wrap=True)
                raise typer.Exit(exit_status(exc)) from None
            except Exception as exc:
                from kstrata.cli.errors import exit_if_disk_full

                # the step under way was rolled back (run.db and its files): the run is whole up to it
                exit_if_disk_full(exc, f"continue the run (it is kept) with: {again}")
                from kstrata.sandbox.policy import HostOutOfMemory, SandboxStartError

                if isinstance(exc, (HostOutOfMemory, SandboxStartError)):  # kstrata's side: the run stands
                    raise OptionError(f"{exc}; the run is kept: when the machine has room again, continue it "
                                      f"with: {again}") from None
                raise
            finally:
                pool.close()
        if not console.is_terminal:
            console.line()  # the live status line ends without a newline off a terminal
        console.print(result_table(result.run_dir, nominal=t.nominal_shape))
        _report_proposer_errors(result.run_dir)
        if learned is not None and getattr(prop, "memory", None) is not None:
            from kstrata.cli.memory import NO_SKILL

            where = getattr(prop.memory, "path", "") or "the memory database"
            n = len(getattr(prop, "_learned", ())) or len(learned)  # learn also runs during the search
            console.print(f"memory: {n} skill(s) from this run stored in {where}" if n
                          else f"memory: no skill stored in {where}: {NO_SKILL}", highlight=False, soft_wrap=True)
        # soft_wrap: off a terminal (80 columns) the path would be wrapped onto a line of its own
        console.print(f"stopped: {result.stop_reason}; run directory: {result.run_dir}", highlight=False,
                      soft_wrap=True)
        if resume is not None:  # an export made before (say, of a run stopped by an error) may be out of date now
            from kstrata.cli.export import stale_exports

            for line in stale_exports(result.run_dir):
                console.print(f"[yellow]stale export:[/] {line}; run kstrata export again", highlight=False,
                              soft_wrap=True)
        steps = next_steps(result.run_dir)
        if steps:
            console.print(steps, highlight=False, markup=False, soft_wrap=True)

    @app.command("tree")
    def tree_cmd(run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run directory.")) -> None:
        """The candidate lineage of a run: level, role, verdict, speedup, router reason."""
        from kstrata.search.views import run_tree

        with user_errors():
            Console().print(run_tree(run_dir))  # made now: the width follows COLUMNS at this call

    @app.command("show")
    def show_cmd(
        run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run directory."),
        candidate: str | None = typer.Argument(None, metavar="CANDIDATE", help="A candidate hash or unique prefix (default: the "
                                               "run's best, what best/ holds)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (lineage, verdict, evidence, "
                                     "timing, the stored feedback a proposer is given, sources) instead of text."),
    ) -> None:
        """One candidate's sources, verdict, timings and feedback (default: the run's best)."""
        from kstrata.search.views import candidate_view

        with user_errors():
            if as_json:  # one object, as `kstrata eval --json` prints (newcomer nc21)
                import json

                from kstrata.search.show_json import candidate_json

                typer.echo(json.dumps(candidate_json(run_dir, candidate), sort_keys=True, default=str))
                return
            console.print(candidate_view(run_dir, candidate, console.width), crop=False)  # the hash line is never cut
