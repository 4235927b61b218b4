"""``kstrata retime RUN [CAND]``: re-time candidates of a finished run on demand.

The timing goes through the judge's path (the evaluator's final round:
:meth:`kstrata.search.evaluators.VerifyMeasureEvaluator.final_round`, i.e.
:func:`kstrata.measure.candidate.time_candidate` in a worker, the candidate in
its sandboxed process) at the run's own timing shape and baselines. The new
measurement replaces the stored one; ``RUN/best/`` and ``RUN/summary.json`` are
rewritten, so a candidate left unranked on a busy machine can be ranked later.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from kstrata.cli.errors import Console, OptionError, user_errors
from kstrata.shellarg import arg
from kstrata.store.run_store import StoreError, read_summary

console = Console()


@dataclass
class RunInfo:
    """What re-evaluating a stored run needs: its task, backend, timing shape and baselines."""

    run_dir: Path
    task: Any
    backend: Any
    shape: dict[str, int] | None
    baselines: tuple[str, ...]
    stop_reason: str


def foreign_task_path(path: object, digest: object) -> str | None:
    """Why the task file a run's stored config names (``path``, with its
    recorded sha256 ``digest``) must not be imported, or ``None``. A task file
    is imported (run) in kstrata's own process, and the config is run-directory
    data anyone could have edited: pointed at a candidate's file in a run
    (``RUN/candidates/<hash>/graph.py``), an import or an export folder
    (:data:`kstrata.tasks.loader.KSTRATA_FOLDERS`), it would run candidate text
    there. A file whose text no longer has the recorded digest is refused here
    too, before it is imported rather than after."""
    import hashlib

    from kstrata.tasks.loader import KSTRATA_FOLDERS

    if not path:
        return None
    file = Path(str(path))
    for folder in file.resolve().parents:
        for marker, what in KSTRATA_FOLDERS.items():
            if (folder / marker).is_file():
                return (f"its task file {file} lies inside {folder}, {what}, which holds candidate text, never "
                        "a task; kstrata does not import it")
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError):
        return None  # resolve_task names the missing or unreadable file
    if hashlib.sha256(text.encode()).hexdigest() != digest:
        return _task_changed(file)
    return None


def _task_changed(file: object) -> str:
    """Why a run whose task ``file`` no longer has its recorded digest is refused."""
    return (f"task file {file} changed since the run started (digest differs); the run verified its candidates "
            "against the earlier text: restore that text to use the run")


def open_run(run_dir: str | Path) -> RunInfo:
    """The task, backend and timing settings of the run in ``run_dir``.

    Raises
    ------
    kstrata.store.StoreError
        If ``run_dir`` holds no run.
    OptionError
        If the run's task file is gone or has changed since the run.
    """
    from kstrata.backends.registry import get_backend
    from kstrata.search.loop import timing_shape_of
    from kstrata.store.run_store import RunStore
    from kstrata.tasks.loader import resolve_task

    run_dir = Path(run_dir)
    with RunStore.open(run_dir) as store:
        config = store.config
    meta = config.get("task", {})
    refuse = foreign_task_path(meta.get("path"), meta.get("digest"))
    if refuse:
        raise OptionError(f"{run_dir}: {refuse}")
    try:
        task = resolve_task(meta.get("path") or meta.get("name"))
    except Exception as e:  # noqa: BLE001 - turned into one message
        raise OptionError(f"{run_dir}: its task {meta.get('name')} ({meta.get('path')}) does not load: {e}") from None
    if task.digest != meta.get("digest"):
        raise OptionError(f"{run_dir}: {_task_changed(meta.get('path'))}")
    cli = config.get("cli") or {}
    try:
        summary = read_summary(run_dir)
    except StoreError:  # re-timing writes it again
        summary = {"stop_reason": "unknown (summary.json damaged)"}
    stop = summary.get("stop_reason", "") if summary is not None else "not finished"
    return RunInfo(run_dir, task, get_backend(config["backend"]), timing_shape_of(config),
                   tuple(cli.get("baselines") or ("eager",)), stop)


def retime_run(run_dir: str | Path, candidate: str | None = None, *, evaluator: Any = None,
               progress: Any = None) -> list[dict[str, Any]]:
    """Re-time ``candidate`` (a hash prefix), or else the run's best and every
    unranked correct candidate, and store the new timings.

    Parameters
    ----------
    evaluator:
        Something with ``final_round(task, backend, sources)`` (default a
        :class:`~kstrata.search.evaluators.VerifyMeasureEvaluator` on a worker
        pool for the run's backend; tests pass their own).
    progress:
        Called with each candidate's hash before it is timed.

    Returns
    -------
    list of dict
        Per candidate: ``hash``, ``before`` and ``after`` (primary speedups,
        ``None`` where untimed), ``before_was`` (which timing ``before`` was:
        ``"first timing"`` or ``"re-timed"``, :func:`kstrata.search.views.reading`),
        ``trusted`` (the new timing ranks), ``why``, ``kept`` (the new timing
        was untrusted and the stored trusted one stands:
        :meth:`~kstrata.search.tree.Node.keeps_reading`).

    Raises
    ------
    kstrata.store.StoreError
        If ``run_dir`` holds no run or ``candidate`` matches none or several.
    OptionError
        If the named candidate is not correct (only correct ones are timed),
        or, with no ``candidate``, the run has no correct candidate
        (:func:`kstrata.cli.export.nothing_correct` says why and what to do).
    """
    from kstrata.search.candidate import to_measurement_record
    from kstrata.search.loop import confirm_ranked_best, write_outcome
    from kstrata.search.tree import CandidateTree, untrusted_findings
    from kstrata.search.views import reading
    from kstrata.store.lock import check_free, run_lock
    from kstrata.store.artifacts import backend_extensions
    from kstrata.store.run_store import RunStore

    info = open_run(run_dir)
    check_free(info.run_dir, "kstrata retime")  # before the worker pool starts
    if candidate is None:  # nothing to time is an error, as show and export say it (exit 2), before any pool
        from kstrata.cli.export import nothing_correct

        with RunStore.open(info.run_dir) as store:
            tree = CandidateTree.from_store(store, with_sources=False)
        if tree.best_correct() is None:
            raise OptionError(nothing_correct(tree, info, "re-time"))
    pool = None
    if evaluator is None:
        from kstrata.backends.workers import pool_for
        from kstrata.search.evaluators import VerifyMeasureEvaluator
        from kstrata.store.secret import run_secret

        pool = pool_for(info.backend)
        evaluator = VerifyMeasureEvaluator(secret=run_secret(info.run_dir), baselines=info.baselines,
                                           shape=info.shape, pool=pool)
    out = []
    try:
        with run_lock(info.run_dir, "kstrata retime"), RunStore.open(info.run_dir) as store:
            tree = CandidateTree.from_store(store, with_sources=False)
            if candidate is not None:
                node = tree[store.resolve(candidate)]
                if not node.correct:
                    raise OptionError(f"candidate {node.hash[:12]} is {node.verdict or 'not evaluated'}; "
                                      "only correct candidates are timed")
                targets = [node]
            else:
                best = tree.best_correct()
                targets = ([best] if best is not None else []) + [
                    tree[u["hash"]] for u in tree.unranked() if best is None or u["hash"] != best.hash]
            for node in targets:
                if progress is not None:
                    progress(node.hash)
                m = evaluator.final_round(info.task, info.backend, store.sources(node.hash))
                earlier = reading(node)
                was = None if earlier is None else earlier.which
                if m is None:
                    out.append({"hash": node.hash, "before": node.speedup, "before_was": was, "after": None,
                                "trusted": False, "why": "the timing failed"
                                + (f" ({cause})" if (cause := getattr(evaluator, "final_error", None)) else "")
                                + "; the earlier one stands"})
                    continue
                rec = to_measurement_record(m, info.baselines[0])
                why = (untrusted_findings(rec.findings) or [""])[0]
                kept = node.keeps_reading(rec)
                if not kept:
                    store.replace_measurement(node.hash, rec)
                out.append({"hash": node.hash, "before": node.speedup, "before_was": was, "after": rec.speedup,
                            "trusted": not why, "why": why, "kept": kept})
            # a best the new timings ranked must have passed the full hidden protocol, not only the screening
            tree = confirm_ranked_best(store, info.task, info.backend, getattr(evaluator, "confirm_promoted", None),
                                       "kstrata retime")
            write_outcome(store, tree, info.stop_reason, backend_extensions(info.backend))
    finally:
        if pool is not None:
            pool.close()
    return out


def unranked_reasons(rows: list[dict[str, Any]], run_dir: str | Path) -> list[str]:
    """Why the rows of :func:`retime_run` that stayed unranked did, once per
    reason with the candidates it applies to: every timing the judge saw
    contended (other processes on the CPUs; its note differs per timing only
    in the numbers) in one line with the range of busy CPUs, any other reason
    once with its candidates."""
    from kstrata.search.tree import UNTRUSTED_PREFIX
    from kstrata.search.views import busy_span

    left = [r for r in rows if not r["trusted"] and r["why"] and not r.get("kept")]
    busy = busy_span([r["why"] for r in left])
    contended = [r for r in left if busy_span([r["why"]])]
    out = []
    if busy:
        held, cpus, n = busy
        them, were = ("it", "it was") if n == 1 else ("them", "they were")
        out.append(f"still unranked, {n} candidate{'s' if n != 1 else ''} "
                   f"({', '.join(r['hash'][:12] for r in contended)}): other processes kept {held} of the "
                   f"{cpus} CPUs busy while {were} timed; time {them} again on a quieter machine "
                   f"(kstrata retime {arg(run_dir)})")
    others: dict[str, list[str]] = {}
    for r in left:
        if r not in contended:
            others.setdefault(r["why"].removeprefix(UNTRUSTED_PREFIX).strip(), []).append(r["hash"][:12])
    out += [f"still unranked ({', '.join(hashes)}): {why}" for why, hashes in others.items()]
    return out


def register(app: typer.Typer) -> None:
    """Add the ``retime`` command to ``app``."""

    @app.command("retime")
    def retime_cmd(
        run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run directory."),
        candidate: str | None = typer.Argument(None, metavar="CANDIDATE", help="A candidate hash or prefix (default: the best "
                                               "and every candidate left unranked)."),
    ) -> None:
        """Re-time candidates of a run in a longer round (the judge's timing path); update best/ and the summary."""
        from kstrata.sandbox.policy import require
        from kstrata.search.views import next_steps, none_ranked, result_table, timing_reason

        def progress(digest: str) -> None:
            console.print(f"re-timing {digest[:12]} ...", highlight=False)

        with user_errors():
            if not (run_dir / "run.db").is_file():  # before the sandbox probe: a typo is told at once
                from kstrata.store.run_store import no_run_here

                raise OptionError(no_run_here(run_dir))
            require()
            rows = retime_run(run_dir, candidate, progress=progress)
        for r in rows:
            fmt = (lambda x: "untimed" if x is None else f"{x:.3g}x")
            was = f" ({r['before_was']})" if r.get("before_was") else ""
            state = "ranked" if r["trusted"] else "still unranked"
            if r.get("kept"):  # an untrusted re-timing never replaces a trusted reading
                state = f"not trusted ({timing_reason(r['why'])}); its trusted {fmt(r['before'])}{was} stands"
            now = " (re-timed now)" if r["after"] is not None else ""
            console.print(f"{r['hash'][:12]}: {fmt(r['before'])}{was} -> {fmt(r['after'])}{now}, {state}",
                          highlight=False, soft_wrap=True)  # one line per candidate, never wrapped
        for line in unranked_reasons(rows, run_dir):  # once per reason, not per row
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        if not rows:
            console.print("no correct candidate to re-time")
        # the same table optimize ends with: its 'timed at' row says when that is not the nominal shape (nc18)
        try:
            nominal = getattr(open_run(run_dir).task, "nominal_shape", None)
        except OptionError:  # the task no longer loads: the table without the note
            nominal = None
        console.print(result_table(run_dir, nominal=nominal))
        from kstrata.cli.export import stale_exports

        ranked = not none_ranked(read_summary(run_dir) or {})
        for line in stale_exports(run_dir):
            again = "run kstrata export again" if ranked else "export again once a candidate ranks"
            console.print(f"[yellow]stale export:[/] {line}; {again}", highlight=False, soft_wrap=True)
        if rows:
            console.print(next_steps(run_dir), highlight=False, markup=False, soft_wrap=True)
