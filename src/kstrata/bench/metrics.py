"""Benchmark metrics over task outcomes, each with a bootstrap confidence interval.

One :class:`TaskOutcome` is what one optimize run (one task on one backend
with one proposer) achieved. The metrics are shares or summaries over ALL the
tasks of a group, so a task with no correct candidate counts against every
rate (KernelBench's fast_p definition: Ouyang et al. 2025, "KernelBench: Can
LLMs Write Efficient GPU Kernels?", section 3; EdgeKernelBench's Fast@1.0
against the tuned baseline).

A task counts as faster than ``p`` only when its speedup *interval's lower
bound* is above ``p`` (:func:`faster_than`): a speedup whose interval contains
``p`` is a tie, not a win (case 03_tie_counted_as_faster: the unchanged
reference measured at 1.02x [0.97, 1.07] is not fast_1), and a speedup with no
interval, or one marked as not counting (``TaskOutcome.excluded``: a weak-task
match, an overhead-dominated timing), never counts.

Intervals are percentile bootstraps over tasks (Efron & Tibshirani 1993,
"An Introduction to the Bootstrap", ch. 13): resample the group's tasks with
replacement ``n_resamples`` times, recompute the metric on each resample and
take the ``(1-confidence)/2`` and ``(1+confidence)/2`` quantiles. Resamples on
which a metric is undefined (no correct task for a geometric mean) are left out.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: p values of fast_p (KernelBench reports 0, 0.5, 0.8, 1.0, 1.5, 2.0).
FAST_P = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
#: The tuned baseline of Fast@1.0 (MetaSchedule-tuned TVM, EdgeKernelBench).
TUNED_BASELINE = "metaschedule"
N_RESAMPLES = 2000
CONFIDENCE = 0.95


@dataclass
class TaskOutcome:
    """What one optimize run achieved on one task.

    Attributes
    ----------
    task, level, category:
        The task and its metadata.
    backend, proposer:
        Where and by whom the candidates were made.
    compiled:
        Some counted candidate did not end in ``compile_error``.
    correct:
        Some counted candidate was ``correct``.
    speedup:
        The best correct candidate's speedup against the primary baseline
        (``None`` when none is correct or none was timed).
    speedups:
        Per baseline, the highest speedup among correct candidates.
    roofline_fraction:
        Fraction of the roofline reached by the best correct candidate (0-1).
    roofline_trusted:
        Whether that fraction comes from a trusted timing (an unranked best's
        roofline is still shown, marked as such; it is never dropped).
    verdicts:
        Counted candidates per verdict kind.
    checks:
        ``"verdict/check"`` -> count, e.g. ``"rejected/no_introspection"``,
        ``"incorrect/tolerance"``, ``"compile_error/syntax"``.
    incorrect_stages:
        Where correctness failed: ``public``/``hidden`` -> count.
    spent:
        The run's ledger totals (``evaluations``, ``wall_s``,
        ``proposer_calls``, ``tokens_in``, ``tokens_out``, ``cost_usd``).
    speedup_ci:
        ``(low, high)`` confidence interval of ``speedup`` (paired bootstrap of
        :mod:`kstrata.measure.stats`); ``None`` when not measured.
    speedups_ci:
        Per baseline, the interval of the speedup in ``speedups``.
    excluded:
        Why the best candidate's speedup does not count as a win although it
        is correct (e.g. ``"weak_match: zeros"``, ``"overhead"``), else ``None``:
        such a task is left out of fast_p and the geomean but still counts as
        correct.
    run_dir:
        The optimize run directory (``None`` for hand-built records).
    status:
        ``done``, ``running`` (interrupted), ``failed`` (kstrata raised) or
        ``unsupported``; only the last is left out of the metrics.
    """

    task: str
    level: int = 1
    category: str = "uncategorized"
    backend: str = ""
    proposer: str = ""
    compiled: bool = False
    correct: bool = False
    speedup: float | None = None
    speedups: dict[str, float] = field(default_factory=dict)
    roofline_fraction: float | None = None
    roofline_trusted: bool = True
    verdicts: dict[str, int] = field(default_factory=dict)
    checks: dict[str, int] = field(default_factory=dict)
    incorrect_stages: dict[str, int] = field(default_factory=dict)
    spent: dict[str, float] = field(default_factory=dict)
    run_dir: str | None = None
    status: str = "done"
    speedup_ci: tuple[float, float] | None = None
    speedups_ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    excluded: str | None = None

    def interval(self, baseline: str | None = None) -> tuple[float, float] | None:
        """The speedup interval against ``baseline`` (default: the primary), or None."""
        ci = self.speedup_ci if baseline is None else self.speedups_ci.get(baseline)
        return None if ci is None or None in tuple(ci) else (float(ci[0]), float(ci[1]))

    @property
    def counted(self) -> bool:
        """Correct, timed, and its speedup counts (not :attr:`excluded`)."""
        return self.correct and self.excluded is None and (self.speedup or 0) > 0

    def fast(self, p: float, baseline: str | None = None) -> bool:
        """Correct, counted, and faster than ``baseline`` (default: the primary)
        by more than ``p`` with the interval's lower bound (:func:`faster_than`).
        At ``p <= 0`` every correct task counts, timed or not (KernelBench's
        fast_0 is its correctness rate: any speedup is above 0, so no timing
        has to be trusted to say so)."""
        if p <= 0:
            return self.correct
        s = self.speedup if baseline is None else self.speedups.get(baseline)
        ci = self.interval(baseline)
        return (self.correct and self.excluded is None and s is not None
                and faster_than(s, None if ci is None else ci[0], p))


def faster_than(speedup: float | None, low: float | None, p: float) -> bool:
    """Whether a speedup counts as faster than ``p``: its interval's lower bound
    ``low`` is above ``p`` (a point estimate alone never counts; an interval
    containing ``p`` is a tie). The one rule behind fast_p, Fast@1.0, the
    report and ``kstrata compare``.

    Parameters
    ----------
    speedup:
        Point estimate (baseline time / candidate time), or None.
    low:
        Lower bound of its confidence interval, or None when not measured.
    p:
        The threshold (1.0: faster than the baseline).
    """
    return speedup is not None and low is not None and math.isfinite(low) and low > p


def excluded_reason(evidence: dict[str, Any] | None, measurement: Any = None) -> str | None:
    """Why a correct candidate's speedup must not count as a win (the value of
    :attr:`TaskOutcome.excluded`), or ``None``.

    Parameters
    ----------
    evidence:
        The verdict's evidence; a ``weak_match`` entry (set by the judge from
        :func:`kstrata.verify.weak.weak_match`) excludes it.
    measurement:
        Its timing (``Measurement`` or dict); an overhead note among its
        ``suspicious`` reasons (:func:`kstrata.measure.overhead.overhead_notes`)
        excludes it, and so does a contention note
        (:class:`kstrata.measure.contention.ContentionProbe`): other processes
        competed for the CPUs while it was timed. Any other suspicious note
        (under the roofline floor, work outside the timed calls) excludes it too.
    """
    from kstrata.measure.contention import PREFIX as CONTENDED
    from kstrata.measure.overhead import PREFIX

    weak = (evidence or {}).get("weak_match") if isinstance(evidence, dict) else None
    if weak:
        return f"weak_match: {weak}"
    if measurement is not None:
        sus = measurement.get("suspicious") if isinstance(measurement, dict) else getattr(measurement, "suspicious", None)
        if any(str(n).startswith(PREFIX) for n in sus or ()):
            return "overhead-dominated timing"
        if any(str(n).startswith(CONTENDED) for n in sus or ()):
            return "contended timing (other processes competed for the CPUs)"
        if sus:  # under the roofline floor, work outside the timed calls, ...
            return f"suspicious timing: {str(sus[0])[:200]}"
    return None


def format_speedup(speedup: float | None, ci: tuple[float, float] | None) -> str:
    """``"1.02x [0.97, 1.07]"``: the point estimate with its interval (``"-"``
    when there is no speedup, ``"1.02x [no interval]"`` without one)."""
    if speedup is None:
        return "-"
    if ci is None:
        return f"{speedup:.3g}x [no interval]"
    return f"{speedup:.3g}x [{ci[0]:.3g}, {ci[1]:.3g}]"


@dataclass(frozen=True)
class Estimate:
    """A metric's point value with its bootstrap interval.

    ``value``/``low``/``high`` are ``None`` when the metric is undefined for
    the group (no task, or no correct task for a mean of speedups); ``n`` is
    the number of tasks it was computed over.
    """

    value: float | None
    low: float | None
    high: float | None
    n: int

    def overlaps(self, other: Estimate) -> bool | None:
        """Whether the two intervals overlap (``None`` if either is undefined)."""
        if None in (self.low, self.high, other.low, other.high):
            return None
        return self.low <= other.high and other.low <= self.high

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}


def bootstrap(
    columns: dict[str, np.ndarray],
    statistic: Callable[[dict[str, np.ndarray]], np.ndarray],
    *,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> Estimate:
    """Percentile-bootstrap interval of ``statistic`` over rows (tasks).

    Parameters
    ----------
    columns:
        Equal-length 1-D arrays, one entry per task.
    statistic:
        Maps columns of shape ``(r, n)`` (``r`` resamples of ``n`` tasks) to
        ``r`` values (``nan`` where undefined); called once on the original
        data as ``r = 1``.
    n_resamples, confidence, seed:
        Resamples, two-sided level in (0, 1), RNG seed (reproducible).

    Returns
    -------
    Estimate

    Raises
    ------
    ValueError
        For a bad ``confidence`` or columns of unequal length.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    sizes = {len(v) for v in columns.values()}
    if len(sizes) > 1:
        raise ValueError(f"columns of unequal length: {sizes}")
    n = sizes.pop() if sizes else 0
    if n == 0:
        return Estimate(None, None, None, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        point = float(statistic({k: v[None, :] for k, v in columns.items()})[0])
        if not math.isfinite(point):
            return Estimate(None, None, None, n)
        idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
        values = statistic({k: v[idx] for k, v in columns.items()})
    values = values[np.isfinite(values)]
    alpha = (1 - confidence) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha]) if values.size else (point, point)
    return Estimate(point, float(low), float(high), n)


def _rate(col: str) -> Callable[[dict[str, np.ndarray]], np.ndarray]:
    return lambda c: c[col].mean(axis=1)


def _geomean(c: dict[str, np.ndarray]) -> np.ndarray:
    mask = c["timed"]
    logs = np.where(mask, c["log_speedup"], 0.0)
    return np.exp(logs.sum(axis=1) / mask.sum(axis=1))


def _median_roofline(c: dict[str, np.ndarray]) -> np.ndarray:
    return np.nanmedian(c["roofline"], axis=1)


def metric_names() -> list[str]:
    """Metric keys of :func:`compute_metrics`, in display order."""
    return (
        ["compile_rate", "correct_rate"]
        + [f"fast_{p:g}" for p in FAST_P]
        + ["fast_1_tuned", "geomean_speedup", "median_roofline"]
    )


#: Human labels of the metric keys.
LABELS = {
    "compile_rate": "compile rate",
    "correct_rate": "correct rate",
    **{f"fast_{p:g}": f"fast_{p:g}" if p > 0 else f"fast_{p:g} (correct, any speed)" for p in FAST_P},
    "fast_1_tuned": f"Fast@1.0 vs {TUNED_BASELINE}",
    "geomean_speedup": "geomean speedup (correct)",
    "median_roofline": "median roofline fraction",
}


def compute_metrics(
    outcomes: Sequence[TaskOutcome],
    *,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> dict[str, Estimate]:
    """Every metric of :func:`metric_names` for one group of task outcomes.

    Definitions (``N`` = all tasks of the group, unsupported ones excluded):

    - ``compile_rate``: share of the ``N`` tasks with a candidate that built.
    - ``correct_rate``: share of the ``N`` tasks with a correct candidate.
    - ``fast_p``: share of the ``N`` tasks that are correct AND whose best
      speedup against the primary baseline has an interval lower bound
      ``> p`` (KernelBench's rule, with the interval: :func:`faster_than`); a
      task with no correct or no timed candidate, no interval, or an
      ``excluded`` speedup counts as not fast. ``fast_0`` is the share
      correct, as in KernelBench (:meth:`TaskOutcome.fast`). Undefined
      (``None``) for ``p > 0`` when tasks of the group are correct but none
      has a measured speedup (an interpreter's or an untimed run: not
      measured, not 0%).
    - ``fast_1_tuned``: share of the ``N`` tasks correct and faster than
      :data:`TUNED_BASELINE` by the same rule (EdgeKernelBench's Fast@1.0);
      undefined (``None``) when no task of the group was timed against that baseline.
    - ``geomean_speedup``: geometric mean of the primary speedup (point
      estimates) over the correct, timed tasks whose speedup is not excluded.
    - ``median_roofline``: median roofline fraction over the tasks that have
      one, trusted timing or not (:func:`untrusted_roofline` counts the
      untrusted ones, which every display marks).

    Returns
    -------
    dict
        Metric key -> :class:`Estimate`.
    """
    rows = [o for o in outcomes if o.status != "unsupported"]
    timed = np.array([o.counted for o in rows], dtype=bool)
    cols: dict[str, np.ndarray] = {
        "compiled": np.array([o.compiled for o in rows], dtype=float),
        "correct": np.array([o.correct for o in rows], dtype=float),
        "timed": timed,
        "log_speedup": np.array(
            [math.log(o.speedup) if t else 0.0 for o, t in zip(rows, timed)], dtype=float),
        "roofline": np.array(
            [np.nan if o.roofline_fraction is None else o.roofline_fraction for o in rows],
            dtype=float),
    }
    for p in FAST_P:
        cols[f"fast_{p:g}"] = np.array([o.fast(p) for o in rows], dtype=float)
    cols["fast_1_tuned"] = np.array([o.fast(1.0, TUNED_BASELINE) for o in rows], dtype=float)
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    out = {
        "compile_rate": bootstrap(cols, _rate("compiled"), **kw),
        "correct_rate": bootstrap(cols, _rate("correct"), **kw),
    }
    # correct tasks, none timed (an interpreter's run): fast_p above 0 was not measured, not 0% (newcomer
    # nc17); with no correct task it is 0% whatever was timed
    # (an untrusted timing has no speedup but a roofline fraction: timed, and not fast)
    measured = any(o.speedup is not None or o.speedups or o.roofline_fraction is not None for o in rows) \
        or not any(o.correct for o in rows)
    for p in FAST_P:
        out[f"fast_{p:g}"] = bootstrap(cols, _rate(f"fast_{p:g}"), **kw) if measured or p <= 0 \
            else Estimate(None, None, None, len(rows))
    if any(TUNED_BASELINE in o.speedups for o in rows):
        out["fast_1_tuned"] = bootstrap(cols, _rate("fast_1_tuned"), **kw)
    else:
        out["fast_1_tuned"] = Estimate(None, None, None, len(rows))
    out["geomean_speedup"] = bootstrap(cols, _geomean, **kw)
    out["median_roofline"] = bootstrap(cols, _median_roofline, **kw)
    return out


def group_by(outcomes: Iterable[TaskOutcome], *keys: str) -> dict[tuple, list[TaskOutcome]]:
    """Outcomes grouped by the values of attributes ``keys`` (sorted by key)."""
    groups: dict[tuple, list[TaskOutcome]] = {}
    for o in outcomes:
        groups.setdefault(tuple(getattr(o, k) for k in keys), []).append(o)
    return dict(sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])))


def spent_totals(outcomes: Iterable[TaskOutcome]) -> dict[str, float]:
    """Ledger totals summed over outcomes (equal-budget accounting)."""
    total: Counter = Counter()
    for o in outcomes:
        total.update({k: float(v) for k, v in o.spent.items()})
    return dict(sorted(total.items()))


def untrusted_roofline(outcomes: Iterable[TaskOutcome]) -> int:
    """How many of ``outcomes`` (unsupported ones left out) have a roofline
    fraction from a timing that is not trusted (in ``median_roofline``, marked
    wherever it is shown: the report, the bench table, ``kstrata compare``)."""
    return sum(1 for o in outcomes if o.status != "unsupported" and o.roofline_fraction is not None
               and not o.roofline_trusted)


@dataclass
class Row:
    """One leaderboard row: a group key, its tasks, metrics and spending."""

    key: dict[str, Any]
    n_tasks: int
    metrics: dict[str, Estimate]
    spent: dict[str, float]
    #: tasks whose roofline fraction (in ``median_roofline``) comes from an untrusted timing
    untrusted_roofline: int = 0


def leaderboard(
    outcomes: Sequence[TaskOutcome], by: Sequence[str] = ("backend", "proposer"), **kw: Any
) -> list[Row]:
    """One :class:`Row` per group of ``by``, sorted by ``fast_1`` then geomean, best first.

    ``kw`` goes to :func:`compute_metrics`.
    """
    rows = []
    for key, group in group_by(outcomes, *by).items():
        counted = [o for o in group if o.status != "unsupported"]
        rows.append(Row(dict(zip(by, key)), len(counted), compute_metrics(group, **kw),
                        spent_totals(group), untrusted_roofline(counted)))
    return sorted(rows, key=lambda r: (-(r.metrics["fast_1"].value or 0),
                                       -(r.metrics["geomean_speedup"].value or 0)))


def breakdown(
    outcomes: Sequence[TaskOutcome], dimension: str,
    by: Sequence[str] = ("backend", "proposer"), **kw: Any,
) -> dict[Any, list[Row]]:
    """Per value of ``dimension`` (``level``, ``category``, ``backend``), the leaderboard
    of its tasks grouped by ``by`` (minus ``dimension`` itself)."""
    by = [b for b in by if b != dimension]
    return {key[0]: leaderboard(group, by, **kw)
            for key, group in group_by(outcomes, dimension).items()}


def failure_taxonomy(outcomes: Iterable[TaskOutcome]) -> dict[str, dict[str, int]]:
    """Counts over every counted candidate of ``outcomes``.

    Returns
    -------
    dict
        ``{"verdicts": {kind: n}, "checks": {"verdict/check": n},
        "incorrect_stages": {"public"|"hidden": n}}``, each sorted by count.
    """
    out: dict[str, Counter] = {"verdicts": Counter(), "checks": Counter(),
                               "incorrect_stages": Counter()}
    for o in outcomes:
        out["verdicts"].update(o.verdicts)
        out["checks"].update(o.checks)
        out["incorrect_stages"].update(o.incorrect_stages)
    return {k: dict(v.most_common()) for k, v in out.items()}
