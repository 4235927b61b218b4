"""``kstrata report``: one self-contained HTML file for a bench or a run directory.

The page holds the leaderboard (metrics with bootstrap intervals), breakdowns
by level, category and backend, speedup distributions, the failure taxonomy,
each run's candidate tree (click a node for its source, diff and feedback),
the budget spent and the environment. CSS, JavaScript and SVG are inlined
from the templates in ``kstrata/report/templates`` (Jinja2); the page loads
nothing from the network.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2

from kstrata.bench import metrics as M
from kstrata.bench.results import Results, RunView, load_results
from kstrata.report.plots import VERDICT_COLOURS, speedup_strips, tree_svg
from kstrata.search.tree import unevaluated
from kstrata.search.views import no_speedup_note, reading, unranked_why, unsupported_note
from kstrata.store.artifacts import unified_diff, write_atomic

TEMPLATES = Path(__file__).parent / "templates"
BREAKDOWN_METRICS = ("correct_rate", "fast_1", "fast_1_tuned", "geomean_speedup", "median_roofline")
SPENT_KINDS = ("evaluations", "wall_s", "proposer_calls", "tokens_in", "tokens_out", "cost_usd")


def _fmt(est: M.Estimate, pct: bool, digits: int = 0) -> dict[str, str]:
    if est.value is None:
        return {"value": "–", "ci": ""}
    f = (lambda v: f"{100 * v:.{digits}f}%") if pct else (lambda v: f"{v:.3g}")
    if est.n < 2:  # a bootstrap over one task is a point: no interval to show (newcomer nc14 read [100%, 100%])
        return {"value": f(est.value), "ci": "(1 task: no interval)"}
    return {"value": f(est.value), "ci": f"[{f(est.low)}, {f(est.high)}]"}


def _is_rate(name: str) -> bool:
    """Shown as a percentage (a share, or the roofline fraction as the CLI prints it)."""
    return name.endswith("_rate") or name.startswith("fast_") or name.endswith("roofline")


def _row(r: M.Row) -> dict[str, Any]:
    # the roofline fraction with one decimal, as the CLI's summary prints it
    metrics = {k: _fmt(v, _is_rate(k), 1 if k.endswith("roofline") else 0) for k, v in r.metrics.items()}
    roof = metrics.get("median_roofline")
    if roof is not None and r.untrusted_roofline and roof["value"] != "–":
        # the CLI says "(from an untrusted timing)" for the same number: the report marks it too
        roof["ci"] = " ".join(x for x in (roof["ci"], f"({r.untrusted_roofline} of {r.n_tasks} from an "
                                          "untrusted timing)") if x)
    return {
        "key": " / ".join(str(v) for v in r.key.values()) or "all",
        "n": r.n_tasks,
        "metrics": metrics,
        "spent": {k: f"{r.spent.get(k, 0):.4g}" for k in SPENT_KINDS},
    }


def _node_data(view: RunView) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    tree = view.tree
    best = tree.best_correct()
    nodes, details = [], {}
    for n in tree:
        parent = n.parents[0] if n.parents else None
        r = reading(n)  # the reading the tree, show and the summary show
        nodes.append({"hash": n.hash, "parent": parent, "level": n.level, "role": n.role,
                      "verdict": n.verdict, "speedup": None if r is None else r.value,
                      "retimed": r is not None and r.retimed, "unranked": n.correct and not n.timing_trusted,
                      "best": best is not None and n.hash == best.hash})
        diff = unified_diff(tree[parent].sources, n.sources) if parent else ""
        details[n.hash] = {
            "hash": n.hash, "level": n.level or "initial", "role": n.role,
            "proposer": n.proposer, "verdict": n.verdict or unevaluated(view.summary is not None),
            "check": n.evaluation.check if n.evaluation else None,
            "speedup": None if r is None else r.value, "reading": None if r is None else r.which,
            "parents": list(n.parents),
            "rationale": n.rationale, "router_reason": n.router_reason,
            "sources": n.sources, "diff": diff, "feedback": n.feedback(),
        }
    return nodes, details


def _timing_record(obj: Any, depth: int = 3) -> dict[str, Any] | None:
    """The first timer result (a dict with ``versions``) inside a stored measurement."""
    if not isinstance(obj, dict) or depth < 0:
        return None
    if "versions" in obj and "method" in obj:
        return obj
    for value in obj.values():
        found = _timing_record(value, depth - 1)
        if found is not None:
            return found
    return None


def _env(results: Results) -> dict[str, Any]:
    if results.kind == "bench":
        return results.config.get("environment", {})
    for view in results.runs:
        for n in view.tree:
            m = _timing_record(n.measurement.raw if n.measurement else None)
            if m is not None:
                return {k: m.get(k) for k in ("device", "method", "versions", "settings", "config")}
    from kstrata.measure import environment

    # no candidate was timed (an interpreter's run): what the run itself records (newcomer nc17: "{}")
    return {"timing": "none: no candidate of the run was timed (no timer's device or versions to show)",
            "backends": sorted({v.backend for v in results.runs}),
            # this process's (the report's machine, not the run's)
            "versions": {**environment.versions(), "note": "of the machine that wrote this report"}}


def _json_script(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``."""
    text = json.dumps(data, default=str, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _tie_note(outcome: Any) -> str | None:
    """``"a tie: not faster ..."`` for a correct outcome whose speedup interval holds 1 (newcomer nc16: the
    report plotted "rmsnorm: 1.15x" for a best whose interval was [0.977, 1.37]), else None."""
    from kstrata.measure.speedup_words import interval_verdict

    ci = getattr(outcome, "speedup_ci", None)
    if not outcome.correct or outcome.speedup is None or not ci or interval_verdict(*ci) != "a tie":
        return None
    return f"a tie: not faster, its interval [{ci[0]:.3g}, {ci[1]:.3g}] holds 1"


def build_context(results: Results, count_initial: bool = False, **metric_kw: Any) -> dict[str, Any]:
    """Everything the template renders, from :func:`kstrata.bench.results.load_results`
    (loaded with ``count_initial``, which the leaderboard states beside its rates)."""
    outs = results.outcomes
    board = M.leaderboard(outs, **metric_kw)
    breakdowns = {dim: {str(v): [_row(r) for r in rows]
                        for v, rows in M.breakdown(outs, dim, **metric_kw).items()}
                  for dim in ("level", "category", "backend")}
    views = {str(v.run_dir): v for v in results.runs}
    notes = [no_speedup_note(getattr(views.get(str(o.run_dir)), "tree", None))
             if o.correct and o.speedup is None else _tie_note(o) for o in outs]
    strips = speedup_strips([
        (" / ".join(str(v) for v in r.key.values()),
         [(o.task, o.speedup if o.correct else None, note)
          for o, note in zip(outs, notes) if o.status != "unsupported"
          and all(getattr(o, k) == v for k, v in r.key.items())])
        for r in board
    ])
    runs, details = [], {}
    for i, view in enumerate(results.runs):
        run_id = f"run{i}"
        nodes, node_details = _node_data(view)
        details[run_id] = node_details
        best = view.tree.best_correct()
        r = None if best is None else reading(best)
        runs.append({
            "id": run_id, "task": view.task, "backend": view.backend, "proposer": view.proposer,
            "svg": tree_svg(nodes, run_id), "n": len(nodes),
            "stop": (view.summary or {}).get("stop_reason", "not finished"),
            # as the CLI's summary: an untrusted timing claims no speedup
            "best": None if best is None else "correct, not timed" if r is None
            else f"{r.text(interval=True)} ({r.which})" if r.trusted else "none ranked (timing not trusted)",
            "verdicts": view.tree.verdict_counts(),
            "unranked": view.tree.unranked(),
            # why, once for the run (every contended timing in one line), as the CLI's summary says it
            "unranked_why": unranked_why(view.tree.unranked()),
            "spent": {k: f"{view.spent.get(k, 0):.4g}" for k in SPENT_KINDS},
        })
    trees = {str(v.run_dir): v.tree for v in results.runs}
    cells = [{
        "task": o.task, "level": o.level, "category": o.category, "backend": o.backend,
        "proposer": o.proposer, "status": o.status,
        # the proposer's candidates (the start is not counted): say where only the start is correct (nc17)
        # a cell that never ran says so and why, not "no" (newcomer nc22)
        "correct": "not run" if o.status == "unsupported" else "yes" if o.correct
        else "no (only the initial candidate, not counted)"
        if str(o.run_dir) in trees and trees[str(o.run_dir)].start_correct() else "no",
        "speedup": unsupported_note(o.backend, o.task) if o.status == "unsupported"
        else (note or "–") if o.speedup is None else M.format_speedup(o.speedup, o.interval())
        + (" (not counted faster: no interval above 1)" if o.correct and o.speedup > 1 and not o.fast(1.0)
           else "")
        + (f" excluded: {o.excluded}" if o.excluded else ""),
        "speedups": ", ".join(f"{b} {M.format_speedup(s, o.interval(b))}" for b, s in sorted(o.speedups.items())),
        "roofline": "–" if o.roofline_fraction is None else f"{100 * o.roofline_fraction:.1f}%",
        "verdicts": ", ".join(f"{k} {v}" for k, v in sorted(o.verdicts.items())),
    } for o, note in zip(outs, notes)]
    taxonomy = {
        " / ".join(str(v) for v in key): M.failure_taxonomy(group)
        for key, group in M.group_by(outs, "backend", "proposer").items()
    }
    spec = results.config.get("spec") if results.kind == "bench" else {
        k: results.config.get(k) for k in ("task", "backend", "proposer", "policy", "budget")}
    from kstrata.bench.compare import start_counted

    counted = start_counted(outs, count_initial)
    start_note = ("Each run's start (the shipped kernel or --initial) counts as a candidate, as in kstrata tree "
                  "and the run's summary; kstrata compare leaves it out unless given --count-initial."
                  if count_initial else f"Start counted: {counted}.")
    return {
        "start_note": start_note,
        "title": f"kstrata {results.kind} report: {results.path.name}",
        "path": str(results.path), "kind": results.kind,
        "spec_json": json.dumps(spec, indent=2, default=str),
        "metric_names": M.metric_names(), "labels": M.LABELS,
        "breakdown_metrics": BREAKDOWN_METRICS,
        "leaderboard": [_row(r) for r in board], "breakdowns": breakdowns,
        "strips": strips, "runs": runs, "cells": cells, "taxonomy": taxonomy,
        "spent_kinds": SPENT_KINDS, "verdict_colours": {str(k): v for k, v in VERDICT_COLOURS.items()},
        "environment_json": json.dumps(_env(results), indent=2, default=str),
        "details_json": _json_script(details),
        "css": (TEMPLATES / "report.css").read_text(),
        "js": (TEMPLATES / "report.js").read_text(),
    }


def render_report(path: str | Path, count_initial: bool | None = None, **metric_kw: Any) -> str:
    """The HTML text of the report of a bench or run directory.

    ``count_initial`` (default: true for a run directory, false for a bench)
    counts the backend's starting point as a candidate: a run's report then
    shows the numbers ``kstrata tree``, ``show`` and the run summary show
    (the run's best may be its start), a bench's scores what the proposers made.

    Raises
    ------
    kstrata.store.StoreError
        If ``path`` is neither a bench nor a run directory.
    """
    if count_initial is None:
        from kstrata.bench.results import is_bench_dir

        count_initial = not is_bench_dir(Path(path))
    results = load_results(path, count_initial=count_initial, with_sources=True)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined)
    return env.get_template("report.html.j2").render(**build_context(results, count_initial, **metric_kw))


def write_report(path: str | Path, out: str | Path | None = None, **kw: Any) -> Path:
    """Render the report of ``path`` and write it (atomically) to ``out``
    (default ``PATH/report.html``), mode 0666 less the umask, as a plain ``open``
    makes it (it holds no secret and is meant to be shared); returns the file written."""
    out = Path(out) if out else Path(path) / "report.html"
    write_atomic(out, render_report(path, **kw), shared=True)  # a report is for handing on: the umask's mode
    return out
