"""Reading optimize runs and bench directories into :class:`TaskOutcome` rows.

A bench directory (``bench.json`` + ``bench.db`` + ``runs/...``) and a single
optimize run directory (``run.db``) are both accepted wherever results are
read (``kstrata report``, ``kstrata compare``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kstrata.bench.harness import CONFIG_NAME, BenchIndex, read_config
from kstrata.bench.metrics import excluded_reason, TaskOutcome
from kstrata.search.tree import CandidateTree
from kstrata.store.run_store import RunStore, StoreError, read_summary

@dataclass
class RunView:
    """One optimize run, read once: its config, tree, ledger and task metadata."""

    run_dir: Path
    config: dict[str, Any]
    tree: CandidateTree
    spent: dict[str, float]
    task_meta: dict[str, Any]
    summary: dict[str, Any] | None = None
    env: dict[str, Any] = field(default_factory=dict)

    @property
    def task(self) -> str:
        return self.config.get("task", {}).get("name", "?")

    @property
    def backend(self) -> str:
        return self.config.get("backend", "?")

    @property
    def proposer(self) -> str:
        return self.config.get("proposer", "?")


def read_run(run_dir: str | Path, with_sources: bool = False) -> RunView:
    """Load one optimize run directory.

    Raises
    ------
    kstrata.store.StoreError
        If ``run_dir`` holds no run.
    """
    run_dir = Path(run_dir)
    with RunStore.open(run_dir) as store:
        config = store.config
        tree = CandidateTree.from_store(store, with_sources=with_sources)
        spent = store.spent()
        tasks = store.tasks()
    summary = read_summary(run_dir)
    meta = (tasks[0].get("meta") or {}) if tasks else {}
    return RunView(run_dir, config, tree, spent, meta, summary)


def outcome(view: RunView, count_initial: bool = False, status: str | None = None) -> TaskOutcome:
    """The :class:`TaskOutcome` of one run.

    Parameters
    ----------
    view:
        From :func:`read_run`.
    count_initial:
        Count the root (the backend's untuned starting point) as a candidate.
        Off by default: a benchmark scores what the proposer made, as
        KernelBench scores the model's kernel and not the reference.
    status:
        Overrides the status (default ``done`` when ``summary.json`` exists,
        else ``running``).
    """
    nodes = [n for n in view.tree if n.evaluated and (count_initial or n.parents)]
    verdicts = Counter(n.verdict for n in nodes)
    checks = Counter(f"{n.verdict}/{n.evaluation.check}" for n in nodes
                     if n.verdict != "correct" and n.evaluation.check)
    stages = Counter(str((n.evaluation.evidence or {}).get("stage", "unknown")) for n in nodes
                     if n.verdict == "incorrect" and isinstance(n.evaluation.evidence, dict))
    correct = [n for n in nodes if n.correct]
    # counting the start, the run's own best (what summary.json, tree and show name: never one reading
    # slower than the start), so the report and the summary agree (newcomer nc16)
    best = (view.tree.best_correct() if count_initial
            else max(correct, key=lambda n: (n.score, -n.seq), default=None))
    speedups: dict[str, float] = {}
    speedups_ci: dict[str, tuple[float, float]] = {}
    for n in correct:
        if not n.timing_trusted:
            continue  # an untrusted timing is not ranked anywhere (tree, summary, report)
        for s in (n.measurement.speedups if n.measurement else ()):
            if s.value > speedups.get(s.baseline, float("-inf")):
                speedups[s.baseline] = s.value
                if s.ci_low is not None and s.ci_high is not None:
                    speedups_ci[s.baseline] = (s.ci_low, s.ci_high)
                else:
                    speedups_ci.pop(s.baseline, None)
    best_ci = None
    if best is not None and best.measurement is not None and best.measurement.speedups:
        primary = best.measurement.speedups[0]
        if primary.ci_low is not None and primary.ci_high is not None:
            best_ci = (primary.ci_low, primary.ci_high)
    excluded = None if best is None else excluded_reason(
        best.evaluation.evidence,
        {"suspicious": [f for f in (best.measurement.findings if best.measurement else []) if isinstance(f, str)]})
    return TaskOutcome(
        task=view.task,
        level=int(view.task_meta.get("level", 1)),
        category=str(view.task_meta.get("category", "uncategorized")),
        backend=view.backend,
        proposer=view.proposer,
        compiled=any(n.verdict != "compile_error" for n in nodes),
        correct=bool(correct),
        speedup=None if best is None or not best.timing_trusted else best.speedup,
        speedups=speedups,
        speedup_ci=best_ci,
        speedups_ci=speedups_ci,
        excluded=excluded,
        roofline_fraction=None if best is None else best.roofline_fraction,
        roofline_trusted=best is None or bool(best.timing_trusted),
        verdicts=dict(verdicts),
        checks=dict(checks),
        incorrect_stages=dict(stages),
        spent=dict(view.spent),
        run_dir=str(view.run_dir),
        status=status or ("done" if view.summary is not None else "running"),
    )


def is_bench_dir(path: str | Path) -> bool:
    """Whether ``path`` is a bench directory (has ``bench.json``)."""
    return (Path(path) / CONFIG_NAME).is_file()


@dataclass
class Results:
    """Everything read from a bench or run directory."""

    path: Path
    kind: str  # "bench" or "run"
    config: dict[str, Any]
    outcomes: list[TaskOutcome]
    runs: list[RunView]


def load_results(path: str | Path, count_initial: bool = False,
                 with_sources: bool = False) -> Results:
    """Read a bench directory or a single optimize run directory.

    Parameters
    ----------
    path:
        The directory.
    count_initial:
        See :func:`outcome`.
    with_sources:
        Load every candidate's sources (the report needs them).

    Raises
    ------
    kstrata.store.StoreError
        If ``path`` is neither a bench nor a run directory.
    """
    path = Path(path)
    if is_bench_dir(path):
        config = read_config(path)
        outcomes, runs = [], []
        from kstrata.store.run_store import writable

        with BenchIndex(path, read_only=not writable(path)) as index:  # a read-only bench is read too
            cells = index.cells()
        for cell in cells:
            run_dir = path / cell["run_dir"]
            if cell["status"] == "unsupported" or not RunStore.exists(run_dir):
                outcomes.append(TaskOutcome(
                    task=cell["task"], level=cell["level"], category=cell["category"],
                    backend=cell["backend"], proposer=cell["proposer"],
                    status="unsupported" if cell["status"] == "unsupported" else "failed",
                ))
                continue
            view = read_run(run_dir, with_sources)
            status = {"done": "done", "failed": "failed"}.get(cell["status"], "running")
            runs.append(view)
            o = outcome(view, count_initial, status)
            o.proposer = cell["proposer"]  # the name the bench was given, not the object's
            outcomes.append(o)
        return Results(path, "bench", config, outcomes, runs)
    if not RunStore.exists(path):
        raise StoreError(f"{path}: neither a bench directory ({CONFIG_NAME}) nor a run (run.db); give a run's "
                         "directory (the --out of kstrata optimize) or a bench's (the --out of kstrata bench)")
    view = read_run(path, with_sources)
    return Results(path, "run", view.config, [outcome(view, count_initial)], [view])
