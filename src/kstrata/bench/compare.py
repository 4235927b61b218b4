"""Two benches (or runs) side by side: each metric, its difference, and whether
the bootstrap intervals overlap (overlapping intervals: no clear difference)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

from kstrata.bench import metrics as M
from kstrata.bench.results import load_results


@dataclass(frozen=True)
class MetricPair:
    """One metric of one group in A and in B."""

    group: str
    metric: str
    a: M.Estimate
    b: M.Estimate

    @property
    def diff(self) -> float | None:
        """``B - A`` (``None`` if either is undefined)."""
        return None if self.a.value is None or self.b.value is None else self.b.value - self.a.value

    @property
    def overlap(self) -> bool | None:
        return self.a.overlaps(self.b)


def _groups(outcomes: list[M.TaskOutcome]) -> dict[str, list[M.TaskOutcome]]:
    return {" / ".join(map(str, k)): v for k, v in M.group_by(outcomes, "backend", "proposer").items()}


def compare_results(path_a: str | Path, path_b: str | Path, count_initial: bool = False,
                    **metric_kw: Any) -> list[MetricPair]:
    """Metric pairs of the bench/run directories ``path_a`` and ``path_b``.

    Groups are (backend, proposer) rows when both directories have the same
    rows; otherwise all tasks of each directory form one group ``"all"`` (e.g.
    two runs with different proposers).

    Raises
    ------
    kstrata.store.StoreError
        If a path is neither a bench nor a run directory.
    """
    return _pairs(load_results(path_a, count_initial).outcomes, load_results(path_b, count_initial).outcomes,
                  **metric_kw)


def _pairs(outcomes_a: list[M.TaskOutcome], outcomes_b: list[M.TaskOutcome],
           **metric_kw: Any) -> list[MetricPair]:
    """:func:`compare_results` on outcomes already read."""
    a, b = _groups(outcomes_a), _groups(outcomes_b)
    if set(a) != set(b):
        a = {"all": [o for g in a.values() for o in g]}
        b = {"all": [o for g in b.values() for o in g]}
    out = []
    for group in sorted(a):
        ma, mb = M.compute_metrics(a[group], **metric_kw), M.compute_metrics(b[group], **metric_kw)
        out += [MetricPair(group, name, ma[name], mb[name]) for name in M.metric_names()]
    return out


def _cell(e: M.Estimate) -> str:
    if e.value is None:
        return "–"
    return f"{e.value:.3g} [{e.low:.3g}, {e.high:.3g}]"


def task_difference(outcomes_a: list[M.TaskOutcome], outcomes_b: list[M.TaskOutcome]) -> str | None:
    """A warning when A and B ran different task sets (their metrics then differ by
    the tasks, not by the methods), else ``None``."""
    ta, tb = {o.task for o in outcomes_a}, {o.task for o in outcomes_b}
    if ta == tb:
        return None
    only = [f"only in {n}: {', '.join(sorted(t)[:6])}{' ...' if len(t) > 6 else ''}"
            for n, t in (("A", ta - tb), ("B", tb - ta)) if t]
    return (f"A and B ran different tasks ({'; '.join(only)}): a difference below may be the tasks', "
            "not the methods'; compare runs of the same tasks")


def compare_table(path_a: str | Path, path_b: str | Path, count_initial: bool = False, **kw: Any) -> Table:
    """:func:`compare_results` as a rich table (A, B, B − A, overlap), captioned with
    :func:`task_difference` when A and B ran different tasks (newcomer nc11: an rmsnorm
    run against an l2norm run was compared without a word); each directory is read once."""
    a, b = load_results(path_a, count_initial).outcomes, load_results(path_b, count_initial).outcomes
    table = Table(title=f"A = {path_a}   B = {path_b}", caption=task_difference(a, b))
    for col in ("group", "metric", "A", "B", "B − A", "intervals overlap"):
        table.add_column(col, no_wrap=True)
    for p in _pairs(a, b, **kw):
        diff = "–" if p.diff is None else f"{p.diff:+.3g}"
        overlap = {None: "–", True: "yes", False: "no (differs)"}[p.overlap]
        table.add_row(p.group, M.LABELS[p.metric], _cell(p.a), _cell(p.b), diff, overlap)
    return table
