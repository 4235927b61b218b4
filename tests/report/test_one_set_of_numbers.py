"""One set of numbers: for one run, the summary (end-of-run table), the HTML
report and the bench outcome agree on the best speedup, its roofline
fraction and the correct count, and an untrusted timing is ranked nowhere
(the newcomer saw 0.673 vs 0.832x, 0.0775 vs 7.1%, 11 vs 12 correct, and a
Tasks row with both 0.673x and 2.46x)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import FakeBackend, FakeTask, parse  # noqa: E402

from kstrata.bench.results import load_results  # noqa: E402
from kstrata.report.html import build_context, render_report  # noqa: E402
from kstrata.search import Budget, SearchSettings, optimize  # noqa: E402
from kstrata.search.tree import UNTRUSTED_PREFIX  # noqa: E402

SPEED = {1: 0.832, 2: 0.673, 4: 2.46}  # tile -> speedup: the start is the best trusted one


class Evaluator:
    def evaluate(self, task, backend, srcs):
        tile = parse(srcs)["tile"]
        if tile not in SPEED:
            return {"verdict": "incorrect"}, None
        s = SPEED[tile]
        findings = [f"{UNTRUSTED_PREFIX} noisy after 2 re-timing(s)"] if s > 2 else []
        return {"verdict": "correct"}, {"median_ms": 1 / s, "speedups": {"eager": {"value": s, "ci": [s * .9, s * 1.1]}},
                                        "roofline_fraction": 0.071 * s / 0.832, "findings": findings}


class Proposer:
    name = "fixed"

    def propose(self, task, candidate, feedback, level, *, context):
        from kstrata.agents.base import Proposal

        if context.step:
            return []
        return [Proposal.edit(candidate.sources, "schedule", f"tile={t}\norder=0\n", "r") for t in (2, 4)]


def test_summary_report_and_outcome_agree_on_a_run(tmp_path):
    res = optimize(FakeTask(), FakeBackend(), Proposer(), Evaluator(), "greedy", Budget(evaluations=3),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0, lookahead_expansions=0))
    summary = json.loads((res.run_dir / "summary.json").read_text())
    assert summary["best"]["speedup"] == 0.832 and summary["unranked"][0]["speedup"] == 2.46
    results = load_results(res.run_dir)  # as the report loads a run (the start counted)
    ctx = build_context(load_results(res.run_dir, count_initial=True))
    (o,) = load_results(res.run_dir, count_initial=True).outcomes
    assert o.speedup == summary["best"]["speedup"] and o.speedups == {"eager": 0.832}
    assert o.verdicts["correct"] == summary["verdicts"]["correct"] == 3
    board = ctx["leaderboard"][0]["metrics"]
    assert board["geomean_speedup"]["value"] == "0.832"
    assert board["median_roofline"]["value"] == "7.1%"  # a percentage with one decimal, as the CLI prints it
    from rich.console import Console

    from kstrata.search.views import result_table

    console = Console(width=300, record=True)
    console.print(result_table(res.run_dir))
    table = console.export_text()
    assert "roofline fraction │ 7.1%" in table and "0.832x" in table and "correct 3" in table
    cell = ctx["cells"][0]
    assert cell["speedup"].startswith("0.832x") and "2.46" not in cell["speedup"] + cell["speedups"]
    html = render_report(res.run_dir)  # a run's report counts its start by default, as the summary does
    assert "best: 0.832x" in html and f"{summary['unranked'][0]['hash'][:12]} read 2.46x" in html
    assert "1 unranked (correct, timing too noisy to trust" in html
    assert results.outcomes[0].speedup == 0.673  # bench semantics (start not counted) stay available


def test_a_run_with_no_trusted_timing_claims_no_speedup_in_report_or_summary(tmp_path):
    class AllNoisy(Evaluator):
        def evaluate(self, task, backend, srcs):
            ev, m = super().evaluate(task, backend, srcs)
            if m is not None:
                m["findings"] = [f"{UNTRUSTED_PREFIX} noisy after 2 re-timing(s)"]
            return ev, m

    from rich.console import Console

    from kstrata.search.views import result_table

    res = optimize(FakeTask(), FakeBackend(), Proposer(), AllNoisy(), "greedy", Budget(evaluations=3),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0, lookahead_expansions=0))
    console = Console(width=300, record=True)
    console.print(result_table(res.run_dir))
    table = console.export_text()
    assert "none ranked" in table and "speedup vs" not in table
    assert "roofline fraction │ 7.1% (from an untrusted timing)" in table
    html = render_report(res.run_dir)
    assert "best: none ranked (timing not trusted)" in html and "best: 0.832x" not in html
    board = build_context(load_results(res.run_dir, count_initial=True))["leaderboard"][0]["metrics"]
    assert board["median_roofline"]["value"] == "7.1%" and board["geomean_speedup"]["value"] == "–"
    assert "1 of 1 from an untrusted timing" in board["median_roofline"]["ci"]  # marked, as the CLI marks it
    assert "1 of 1 from an untrusted timing" in html


def test_a_metric_over_one_task_shows_no_interval():
    """newcomer nc14: a one-run report's leaderboard showed [100%, 100%] bootstrap intervals."""
    from kstrata.bench.metrics import Estimate
    from kstrata.report.html import _fmt

    assert _fmt(Estimate(1.0, 1.0, 1.0, 1), pct=True) == {"value": "100%", "ci": "(1 task: no interval)"}
    assert _fmt(Estimate(0.5, 0.25, 0.75, 4), pct=True)["ci"] == "[25%, 75%]"
