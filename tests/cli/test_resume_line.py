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


def test_resume_on_another_backend_is_refused_before_any_resuming_line(tmp_path):
    """newcomer nc15: ``--resume RUN --backend tvm-llvm`` on a tilelang-c run printed
    "resuming: 5 of 5 evaluations done", then refused."""
    from types import SimpleNamespace

    from typer.testing import CliRunner

    import kstrata
    from kstrata.backends.registry import get_backend
    from kstrata.cli.main import app

    judge = SimpleNamespace(evaluate=lambda task, backend, sources: ({"verdict": "correct", "feedback": []}, None))
    proposer = SimpleNamespace(name="none", propose=lambda *a, **k: [])
    src = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"
    run = optimize(kstrata.load_task("rmsnorm"), get_backend("pytorch"), proposer, judge, "greedy",
                   Budget(evaluations=1), tmp_path / "run", initial_sources={"source": src}).run_dir
    r = CliRunner().invoke(app, ["optimize", "rmsnorm", "--backend", "tvm-llvm", "--resume", str(run)],
                           env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert "resuming:" not in r.output and "run directory:" not in r.output, r.output
    assert "is a run of rmsnorm on pytorch, not rmsnorm on tvm-llvm; resume it with: kstrata optimize" in r.output
    assert f"--backend pytorch --resume {run}" in r.output
