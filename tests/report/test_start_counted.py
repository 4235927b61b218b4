"""``compare`` and ``report`` on a run whose only candidate is its (correct)
start say next to their rates whether the start is counted (newcomer nc15:
compare gave compile rate 0, correct rate 0, fast_0 0 and report 100%, with
only a footnote about --count-initial)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import FakeBackend, FakeTask, NoProposals  # noqa: E402

from kstrata.bench.compare import compare_table  # noqa: E402
from kstrata.report.html import render_report  # noqa: E402
from kstrata.search import Budget, SearchSettings, optimize  # noqa: E402


class Evaluator:
    def evaluate(self, task, backend, srcs):
        return {"verdict": "correct"}, {"median_ms": 1.0, "speedups": {"eager": {"value": 1.0, "ci": [0.9, 1.1]}}}


def _rows(table):
    cols = [list(c.cells) for c in table.columns]
    return [dict(zip(("group", "metric", "A", "B"), row)) for row in zip(*cols)]


def test_compare_and_report_say_whether_the_start_counts(tmp_path):
    run = optimize(FakeTask(), FakeBackend(), NoProposals(), Evaluator(), "greedy", Budget(evaluations=1),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0, lookahead_expansions=0)).run_dir
    rows = _rows(compare_table(run, run, n_resamples=20))
    start = next(r for r in rows if r["metric"] == "start counted")
    assert start["A"].startswith("no: 1 of 1 task(s) had no candidate besides the start, so their rates read 0")
    correct = next(r for r in rows if r["metric"] == "correct rate")
    assert correct["A"].startswith("0 ")
    counted = _rows(compare_table(run, run, count_initial=True, n_resamples=20))
    assert next(r for r in counted if r["metric"] == "start counted")["A"] == "yes (--count-initial)"
    assert next(r for r in counted if r["metric"] == "correct rate")["A"].startswith("1 ")
    html = render_report(run)
    assert "start (the shipped kernel or --initial) counts as a candidate" in html
    assert "kstrata compare leaves it out unless given --count-initial" in html
