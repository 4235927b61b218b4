"""``kstrata bench`` never calls a correct run "none correct" nor claims an
untrusted reading as its best: its line per run and its table say "none
ranked" / "correct, unranked (timing not trusted)" with why, as the report does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from bench_helpers import make_bench  # noqa: E402

from kstrata.search.tree import UNTRUSTED_PREFIX  # noqa: E402
from kstrata.search.views import bench_table, best_phrase  # noqa: E402


class Untrusted:  # stands in for verify + time: every timing read 1.25x and was not believed
    def evaluate(self, task, backend, sources):
        return {"verdict": "correct"}, {"median_ms": 1.0, "speedups": {"eager": 1.25},
                                        "findings": [f"{UNTRUSTED_PREFIX} the timing stayed noisy after 2 re-timing(s)"]}


def test_a_bench_of_unranked_runs_says_correct_unranked_not_none_correct(tmp_path):
    make_bench(tmp_path / "b", tasks=("relu",), proposers=("edits",), evals=2,
               evaluator_factory=lambda *a: Untrusted())
    (summary_path,) = (tmp_path / "b").glob("runs/*/*/*/summary.json")
    assert best_phrase(json.loads(summary_path.read_text())) == "none ranked (correct, timing not trusted)"
    console = Console(width=300, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(bench_table(tmp_path / "b"))
    table = console.export_text()
    assert "correct, unranked (timing not trusted): timing stayed noisy" in table and "none correct" not in table
    assert "1.25x" not in table
    # its verdicts count what the proposer made, which the caption says (newcomer nc18: 'correct 2' beside
    # '3 of them were timed', the start included there)
    assert "speedup and verdicts: of the candidates each proposer made (the start, the initial candidate, is not " \
        "counted" in " ".join(table.split())


def test_best_phrase_covers_every_kind_of_run():
    ranked = {"best": {"hash": "a" * 64, "speedups": [{"baseline": "eager", "value": 1.5}]}}
    assert best_phrase(ranked) == "1.5x"
    assert best_phrase({"best": None}) == "none correct"
    assert best_phrase({"best": {"hash": "a" * 64, "speedups": []}, "timed": False}) == "correct, not timed"
