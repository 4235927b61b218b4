"""Terminal views of a run for the CLI: the lineage tree, one candidate, and
the end-of-run table (``kstrata tree``, ``kstrata show``, ``kstrata optimize``)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from kstrata.search.tree import CandidateTree
from kstrata.store.run_store import RunStore


def run_tree(run_dir: str | Path) -> RenderableType:
    """The lineage of the run in ``run_dir`` as a rich tree (hash prefix, level,
    role, verdict, speedup, router reason); for a bench directory, one tree
    per run (task, backend, proposer).

    Raises
    ------
    kstrata.store.StoreError
        If ``run_dir`` is neither a run nor a bench directory.
    """
    from kstrata.bench.results import is_bench_dir, load_results

    if is_bench_dir(Path(run_dir)):
        views = load_results(run_dir).runs
        return Group(*(v.tree.render(f"{v.task} on {v.backend} · {v.proposer}") for v in views)) if views \
            else Text(f"{run_dir}: a bench with no runs yet")
    with RunStore.open(run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
        config = store.config
    title = f"{config.get('task', {}).get('name', '?')} on {config.get('backend', '?')}"
    return tree.render(title)


def candidate_view(run_dir: str | Path, prefix: str) -> RenderableType:
    """One candidate: lineage, verdict, speedups, feedback and its sources.

    Raises
    ------
    kstrata.store.StoreError
        If ``run_dir`` is not a run or ``prefix`` matches no candidate or several.
    """
    with RunStore.open(run_dir) as store:
        digest = store.resolve(prefix)
        tree = CandidateTree.from_store(store)
    node = tree[digest]
    head = Table.grid(padding=(0, 2))
    head.add_row("hash", node.hash)
    head.add_row("level / role", f"{node.level or 'initial'} / {node.role} ({node.proposer})")
    head.add_row("parents", ", ".join(p[:12] for p in node.parents) or "-")
    head.add_row("path to root", " ← ".join(n.hash[:8] for n in tree.path_to_root(digest)))
    head.add_row("rationale", node.rationale or "-")
    head.add_row("router reason", node.router_reason or "-")
    head.add_row("verdict", f"{node.verdict or 'pending'}"
                 + (f" ({node.evaluation.check})" if node.evaluation and node.evaluation.check else ""))
    if node.measurement is not None:
        for s in node.measurement.speedups:
            ci = f" [{s.ci_low:.3g}, {s.ci_high:.3g}]" if s.ci_low is not None else ""
            head.add_row(f"speedup vs {s.baseline}", f"{s.value:.3g}x{ci}")
        if node.roofline_fraction is not None:
            head.add_row("roofline", f"{node.roofline_fraction:.1%} ({node.bound})")
    parts: list[RenderableType] = [head]
    feedback = node.feedback()
    if feedback.get("evaluation") or feedback.get("measurement"):
        parts += [Text("feedback", style="bold"), Text(json.dumps(feedback, indent=2, default=str))]
    for level, text in sorted(node.sources.items()):
        # word_wrap: a line longer than the terminal continues on the next row (no number), never cut
        parts += [Text(f"{level} source", style="bold"), Syntax(text, "python", line_numbers=True, word_wrap=True)]
    return Group(*parts)


def result_table(run_dir: str | Path) -> Table:
    """End-of-run table: best candidate, speedup vs each baseline with its
    interval, roofline fraction, verdict counts, budget spent, stop reason
    (from ``summary.json`` and the store)."""
    run_dir = Path(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    table = Table(title=f"run {run_dir}", show_header=False)
    best = summary.get("best")
    table.add_row("stopped", summary["stop_reason"])
    table.add_row("best", best["hash"][:12] if best else "none correct")
    for s in (best or {}).get("speedups", []):
        ci = f" [{s['ci_low']:.3g}, {s['ci_high']:.3g}]" if s.get("ci_low") is not None else ""
        table.add_row(f"speedup vs {s['baseline']}", f"{s['value']:.3g}x{ci}")
    if best and best.get("roofline_fraction") is not None:
        table.add_row("roofline fraction", f"{best['roofline_fraction']:.1%}")
    table.add_row("verdicts", ", ".join(f"{k} {v}" for k, v in sorted(summary["verdicts"].items())))
    for u in summary.get("unranked", []):
        reading = "" if u.get("speedup") is None else f" read {u['speedup']:.3g}x"
        table.add_row("unranked", f"{u['hash'][:12]}{reading}: {u['why']}")
    spent = summary["spent"]
    table.add_row("spent", ", ".join(f"{k} {v:g}" for k, v in sorted(spent.items())))
    la = summary.get("lookahead", {})
    if la.get("wins"):
        table.add_row("wins from slower nodes", f"{la['wins_from_slower']}/{la['wins']}")
    return table


def bench_table(bench_dir: str | Path) -> Table:
    """One row per bench cell: task, backend, proposer, status, the best
    speedup against the primary baseline with its interval, and verdicts
    (the numbers of :func:`kstrata.bench.results.load_results`, as the report).

    Raises
    ------
    kstrata.store.StoreError
        If ``bench_dir`` is not a bench directory.
    """
    from kstrata.bench.metrics import format_speedup
    from kstrata.bench.results import load_results

    table = Table(title=f"bench {bench_dir}")
    for col in ("task", "backend", "proposer", "status", "speedup", "verdicts"):
        table.add_column(col)
    for o in load_results(bench_dir).outcomes:
        speedup = format_speedup(o.speedup, o.speedup_ci) if o.correct else "none correct"
        table.add_row(o.task, o.backend, o.proposer, o.status, speedup + (f" (excluded: {o.excluded})"
                                                                           if o.excluded else ""),
                      ", ".join(f"{k} {v}" for k, v in sorted(o.verdicts.items())))
    return table
