"""``kstrata optimize --resume`` says where the run stands before it goes on
(the newcomer resumed a run and saw no count of what was already done)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask  # noqa: E402

from kstrata.cli.optimize import resuming_line  # noqa: E402
from kstrata.search import Budget, SearchSettings, optimize  # noqa: E402
from kstrata.store.run_store import RunStore  # noqa: E402


def test_resuming_line_counts_the_runs_evaluations_and_candidates(tmp_path):
    run = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=3),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0)).run_dir
    with RunStore.open(run) as store:
        done = int(store.spent()["evaluations"])
        cands = store.candidates()
    correct = sum(1 for c in cands if c.evaluation is not None and c.evaluation.verdict == "correct")
    line = resuming_line(run, Budget(evaluations=10))
    assert line == f"resuming: {done} of 10 evaluations done, {len(cands)} candidates ({correct} correct)"
    assert done == 3 and correct >= 1
    assert resuming_line(run, Budget(evaluations=None)).startswith(f"resuming: {done} evaluations done")
