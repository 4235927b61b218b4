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
    #: tasks of A and of B whose value in this metric comes from an untrusted timing (median_roofline)
    untrusted: tuple[int, int] = (0, 0)

    @property
    def diff(self) -> float | None:
        """``B - A`` (``None`` if either is undefined or rests on an untrusted timing)."""
        if self.a.value is None or self.b.value is None or any(self.untrusted):
            return None
        return self.b.value - self.a.value

    @property
    def too_few(self) -> bool:
        """A or B rests on fewer than 2 tasks: its bootstrap interval over tasks is a
        point, so no overlap test can say the two differ."""
        return self.a.value is not None and self.b.value is not None and min(self.a.n, self.b.n) < 2

    @property
    def overlap(self) -> bool | None:
        """Whether the intervals overlap; ``None`` (not compared) when either is
        undefined, rests on an untrusted timing, or on one task (:attr:`too_few`)."""
        return None if any(self.untrusted) or self.too_few else self.a.overlaps(self.b)


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
        untrusted = (M.untrusted_roofline(a[group]), M.untrusted_roofline(b[group]))
        out += [MetricPair(group, name, ma[name], mb[name], untrusted if name == "median_roofline" else (0, 0))
                for name in M.metric_names()]
    return out


def _cell(e: M.Estimate, untrusted: int = 0) -> str:
    if e.value is None:
        return "–"
    mark = f" (untrusted: {untrusted} of {e.n})" if untrusted else ""
    return f"{e.value:.3g} [{e.low:.3g}, {e.high:.3g}]{mark}"


#: the caption's word on whose best a run's row reads (summary.json's best may be the start)
BEST_NOTE = ("each task's numbers are its best candidate among the proposer's own (the start counts with "
             "--count-initial), so a roofline here can differ from summary.json's best, which may be the start; "
             "a value from an untrusted timing is marked and not compared (B − A: –)")


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


def backend_difference(outcomes_a: list[M.TaskOutcome], outcomes_b: list[M.TaskOutcome]) -> str | None:
    """A warning when A and B ran on different backends (their metrics then differ by the
    backends as much as by the methods; newcomer nc27: a tvm-llvm run against a triton-interp
    one was compared without a word), else ``None``."""
    ba, bb = sorted({o.backend for o in outcomes_a}), sorted({o.backend for o in outcomes_b})
    if ba == bb:
        return None
    return (f"A ran on {', '.join(ba) or 'no backend'} and B on {', '.join(bb) or 'no backend'}: a difference "
            "below may be the backends', not the methods'")


def nothing_evaluated(outcomes: list[M.TaskOutcome]) -> bool:
    """Whether no candidate of ``outcomes`` (the start included) was evaluated, e.g. a run
    stopped before its first verdict: its rates are not 0, they were never measured."""
    rows = [o for o in outcomes if o.status != "unsupported"]
    return all(not (o.spent or {}).get("evaluations") and not sum(o.verdicts.values()) for o in rows)


#: a side's cells when :func:`nothing_evaluated` holds
NOTHING = "– (nothing evaluated)"


def start_counted(outcomes: list[M.TaskOutcome], count_initial: bool) -> str:
    """Whether the rates beside it count each run's start, and, when they do not,
    how many tasks had no other candidate (their rates read 0 for that reason,
    not because the start failed: newcomer nc15 read 'correct rate 0' in compare
    where the report, which counts the start, said 100%)."""
    if count_initial:
        return "yes (--count-initial)"
    bare = sum(1 for o in outcomes if o.status != "unsupported" and not sum(o.verdicts.values()))
    if not bare:
        return "no (the proposer's candidates only)"
    return (f"no: {bare} of {len(outcomes)} task(s) had no candidate besides the start, so their rates read 0 "
            "here (kstrata report counts a run's start; --count-initial counts it here too)")


def compare_table(path_a: str | Path, path_b: str | Path, count_initial: bool = False, **kw: Any) -> Table:
    """:func:`compare_results` as a rich table (A, B, B − A, overlap), captioned with
    :func:`task_difference` when A and B ran different tasks (newcomer nc11: an rmsnorm
    run against an l2norm run was compared without a word) and :func:`backend_difference`
    when they ran on different backends; a side with :func:`nothing_evaluated` reads
    :data:`NOTHING`, not rates of 0 and ``B − A`` of -1; each directory is read once."""
    a, b = load_results(path_a, count_initial).outcomes, load_results(path_b, count_initial).outcomes
    notes = [n for n in (task_difference(a, b), backend_difference(a, b), None if count_initial else BEST_NOTE) if n]
    idle = nothing_evaluated(a), nothing_evaluated(b)
    table = Table(title=f"A = {path_a}   B = {path_b}", caption="; ".join(notes) or None)
    # the terminal's width: every cell wraps at its spaces on a narrow one, no column narrower than its longest word
    for col, least in (("group", 8), ("metric", 14), ("A", 12), ("B", 12), ("B − A", 5), ("intervals overlap", 9)):
        table.add_column(col, min_width=least)
    table.add_row("", "start counted", *(NOTHING if i else start_counted(o, count_initial)
                                         for o, i in ((a, idle[0]), (b, idle[1]))), "–", "–")
    for p in _pairs(a, b, **kw):
        diff = "–" if p.diff is None or any(idle) else f"{p.diff:+.3g}"
        overlap = ("–" if any(idle) else "– (untrusted)" if any(p.untrusted) else "– (1 task)" if p.too_few
                   else {None: "–", True: "yes", False: "no (differs)"}[p.overlap])
        table.add_row(p.group, M.LABELS[p.metric], NOTHING if idle[0] else _cell(p.a, p.untrusted[0]),
                      NOTHING if idle[1] else _cell(p.b, p.untrusted[1]), diff, overlap)
    return table
