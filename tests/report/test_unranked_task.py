"""A task whose best is correct but unranked (every timing contended) reads
"correct, unranked" with why in the HTML report's speedup distribution and
Tasks table, not "not correct" (the newcomer's report drew rmsnorm as a "no
correct candidate" cross beside "correct 12"), and the report says why once
per run, not the judge's contended paragraph once per candidate."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask, contended_finding  # noqa: E402

from kstrata.bench.results import load_results  # noqa: E402
from kstrata.report.html import build_context, render_report  # noqa: E402
from kstrata.report.plots import speedup_strips  # noqa: E402
from kstrata.search import Budget, SearchSettings, optimize  # noqa: E402


class Contended(FakeEvaluator):
    """Every timing contended, each with its own reading of the busy CPUs."""

    def __init__(self):
        super().__init__()
        self.busy = 1.30

    def evaluate(self, task, backend, srcs):
        ev, m = super().evaluate(task, backend, srcs)
        if m is not None:
            self.busy += 0.02
            m["findings"] = [contended_finding(self.busy)]
        return ev, m


def _run(tmp_path):
    return optimize(FakeTask(), FakeBackend(), FakeProposer(), Contended(), "greedy", Budget(evaluations=5),
                    tmp_path / "run", settings=SearchSettings(final_contenders=0)).run_dir


def test_a_correct_unranked_task_is_drawn_and_listed_as_correct_unranked_with_why(tmp_path):
    run = _run(tmp_path)
    ctx = build_context(load_results(run, count_initial=True))
    strip = ctx["strips"]
    assert "not correct" not in strip and 'class="fail"' not in strip
    (title,) = re.findall(r'<circle class="unranked"[^>]*><title>([^<]*)</title>', strip)
    assert title.startswith("synthetic: correct, unranked (timing not trusted): other processes kept 1.3-1.4 "
                            "of the 2 CPUs busy while 5 of them were timed")
    (cell,) = ctx["cells"]
    assert cell["correct"] and cell["speedup"].startswith("correct, unranked (timing not trusted): other processes")


def test_the_report_says_why_once_per_run(tmp_path):
    html = render_report(_run(tmp_path))
    para = html.split('class="unranked">', 1)[1].split("</p>", 1)[0]
    assert para.startswith("5 unranked (correct, timing too noisy to trust; <code>kstrata retime RUN</code>")
    assert para.count("Why:") == 1 and para.count("other processes kept") == 1
    assert "other processes kept 1.3-1.4 of the 2 CPUs busy while 5 of them were timed" in para
    assert "Time it again" not in para and para.count("retime") == 1  # the advice once, for a run


def test_strips_tell_failed_unranked_and_ranked_tasks_apart():
    svg = speedup_strips([("all", [("a", None), ("b", None, "correct, not timed (no speedup measured)"),
                                   ("c", 1.5, None)])])
    assert "a: not correct" in svg and "b: correct, not timed (no speedup measured)" in svg and "c: 1.5x" in svg
    assert svg.count('class="fail"') == 1 and svg.count('class="unranked"') == 1


def test_the_bottom_labels_of_the_strips_do_not_overlap():
    """newcomer nc15: the 'unranked' column label overlapped the '0.25x' tick label.
    Extents estimated at 0.6 em a character (wider than Chromium's sans-serif average)."""
    import re

    svg = speedup_strips([("all", [("a", None), ("b", None, "correct, not timed"), ("c", 0.3, None)])])
    spans = []
    for x, size, text in re.findall(r'<text x="([\d.]+)" y="[\d.]+" font-size="(\d+)" text-anchor="middle"[^>]*>'
                                     r'([^<]+)</text>', svg):
        half = len(text) * 0.6 * float(size) / 2
        spans.append((float(x) - half, float(x) + half, text))
    spans.sort()
    assert [t for *_, t in spans][:3] == ["fail", "unranked", "0.25x"], spans
    for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
        assert end < start, f"{a!r} ends at {end:.0f}, {b!r} starts at {start:.0f}"
