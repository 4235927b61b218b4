"""``--budget`` on ``--resume`` is the run's total (newcomer nc17): one below what the run has spent is
refused before anything is written, and a resume's budget becomes the run's own, so a later resume
without ``--budget`` does not read the creation's limit back ("6 of 4 evaluations done")."""

from __future__ import annotations

from typer.testing import CliRunner

import kstrata
from kstrata.backends.registry import get_backend
from kstrata.cli.main import app
from kstrata.search import Budget, optimize
from kstrata.store.run_store import RunStore

RELU = '''import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
'''


class _Correct:
    def evaluate(self, task, backend, sources):
        return {"verdict": "correct", "feedback": []}, None


class _NoProposer:
    name = "none"

    def propose(self, *a, **k):
        return []


def _run(run_dir, evals, resume=False):
    return optimize(kstrata.load_task("relu"), get_backend("pytorch"), _NoProposer(), _Correct(), "greedy",
                    Budget(evaluations=evals), run_dir, initial_sources={"source": RELU}, resume=resume)


def test_a_resume_budget_below_what_was_spent_is_refused_and_changes_nothing(tmp_path):
    run = tmp_path / "run"
    _run(run, 1)
    summary = (run / "summary.json").read_text()
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "pytorch", "--resume", str(run),
                                 "--budget", "evals=1"], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert "already spent 1 evaluations" in text and "the run's total" in text, text
    assert (run / "summary.json").read_text() == summary


def test_a_resumes_budget_is_the_runs_own_from_then_on(tmp_path):
    run = tmp_path / "run"
    _run(run, 1)
    _run(run, 3, resume=True)
    with RunStore.open(run) as store:
        assert store.config["budget"]["evaluations"] == 3
    assert '"evaluations": 3' in (run / "config.json").read_text()
