"""A speedup whose 95% interval holds 1 is a tie, shown as one wherever it is shown (newcomer nc16: the
best "1.16x [0.977, 1.37]" was the run's table row and `export`'s "speedup vs eager: 1.16x [0.977, 1.37]"
with no word, where `eval` calls such an interval a tie)."""

from __future__ import annotations

import json

from rich.console import Console

from kstrata.search.views import Reading, best_phrase, result_table

TIE = {"baseline": "eager", "value": 1.16, "ci_low": 0.977, "ci_high": 1.37, "shape": {"N": 64}}
FASTER = {**TIE, "value": 1.5, "ci_low": 1.2, "ci_high": 1.9}


def _summary(speedup: dict) -> dict:
    return {"best": {"hash": "ab" * 32, "speedups": [speedup]}, "verdicts": {"correct": 1},
            "spent": {"evals": 1}, "stop_reason": "budget"}


def _table_text(tmp_path, speedup: dict) -> str:
    (tmp_path / "summary.json").write_text(json.dumps(_summary(speedup)))
    console = Console(width=300, record=True)
    console.print(result_table(tmp_path))
    return console.export_text()


def test_the_run_table_says_a_tie(tmp_path):
    assert "a tie, not faster" in _table_text(tmp_path, TIE)
    assert "a tie" not in _table_text(tmp_path, FASTER)


def test_the_tree_and_show_reading_says_a_tie():
    r = Reading(1.16, "eager", 0.977, 1.37, trusted=True, retimed=False)
    assert "tie" in r.text() and "tie" in r.text(interval=True)
    assert "tie" not in Reading(1.5, "eager", 1.2, 1.9, trusted=True, retimed=False).text()


def test_the_bench_line_says_a_tie():
    assert "tie" in best_phrase(_summary(TIE)) and "tie" not in best_phrase(_summary(FASTER))


def test_export_says_a_tie(tmp_path):
    from kstrata.cli.export import usage_hint

    meta = {"candidate": "ab" * 32, "task": "relu", "backend": "tvm-llvm", "runs_at": "cpu", "run": str(tmp_path),
            "speedups": [TIE], "timing_trusted": True, "init_inputs": [], "python": "python3", "shape_text": "N=64",
            "speedup_note": "", "target": "llvm"}
    (tmp_path / "export.json").write_text(json.dumps(meta))
    text = usage_hint(tmp_path)
    line = next(ln for ln in text.splitlines() if ln.startswith("speedup vs eager"))
    assert "a tie" in line, line


def test_the_report_strip_marks_a_tie():
    from kstrata.report.plots import speedup_strips

    svg = speedup_strips([("all", [("rmsnorm", 1.16, "a tie: not faster, its interval [0.977, 1.37] holds 1"),
                                   ("relu", 1.5, None)])])
    assert "rmsnorm: 1.16x (a tie: not faster" in svg and "relu: 1.5x</title>" in svg


def test_the_report_notes_a_tie_from_the_outcomes_interval():
    from types import SimpleNamespace

    from kstrata.report.html import _tie_note

    assert "a tie" in _tie_note(SimpleNamespace(correct=True, speedup=1.16, speedup_ci=(0.977, 1.37)))
    assert _tie_note(SimpleNamespace(correct=True, speedup=1.5, speedup_ci=(1.2, 1.9))) is None
