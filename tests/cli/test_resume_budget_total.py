"""``--budget`` on ``--resume`` is the run's total (newcomer nc17): one below what the run has spent is
refused before anything is written, and a resume's budget becomes the run's own, so a later resume
without ``--budget`` does not read the creation's limit back ("6 of 4 evaluations done")."""

from __future__ import annotations

from bench_helpers import untimed_relu_run as _run
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.store.run_store import RunStore


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
