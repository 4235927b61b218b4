"""A run's ``best/`` edited by hand is told apart from the candidate the run stored
(newcomer nc24, case /tmp/nc24/cases/edited_best_eval_vs_export): the user inverted a
mask in ``RUN/best/graph.py``; ``kstrata eval TASK RUN/best`` checked the edit
(incorrect) while ``kstrata export RUN`` shipped the stored original, neither saying
so. Now export warns, naming the edited file and what to do, and eval says it checks
edited files, not the stored candidate. Stand-ins: a pytorch run whose verifier is a
stub; eval is stopped by an option error right after its note, before verifying."""

from __future__ import annotations

import kstrata
from typer.testing import CliRunner

from kstrata.backends.registry import get_backend
from kstrata.cli.main import app
from kstrata.search import Budget, optimize

from test_export_and_api import RMSNORM_NEW, _CorrectUntimed, _NoProposer


def test_export_and_eval_say_that_best_was_edited(tmp_path):
    res = optimize(kstrata.load_task("rmsnorm"), get_backend("pytorch"), _NoProposer(), _CorrectUntimed(), "greedy",
                   Budget(evaluations=1), tmp_path / "run", initial_sources={"source": RMSNORM_NEW})
    best = res.run_dir / "best" / "source.py"
    assert best.read_text() == RMSNORM_NEW
    env = {"COLUMNS": "300"}
    r = CliRunner().invoke(app, ["export", str(res.run_dir), "--to", str(tmp_path / "pkg")], env=env)
    assert r.exit_code == 0 and "warning" not in r.output, r.output  # as stored: nothing to say

    best.write_text(RMSNORM_NEW.replace("torch.rsqrt", "1 / torch.sqrt"))  # the user's hand edit
    r = CliRunner().invoke(app, ["export", str(res.run_dir), "--to", str(tmp_path / "pkg2")], env=env)
    said = " ".join(r.output.split())
    assert r.exit_code == 0, r.output
    assert f"warning: {best} differs from candidate {res.best.hash[:12]} as the run stored it" in said
    assert "not from the edited files" in said and f"--initial {res.run_dir / 'best'}" in said
    assert (tmp_path / "pkg2" / "candidate.py").read_text() == RMSNORM_NEW  # the stored one, as said

    r = CliRunner().invoke(app, ["eval", "rmsnorm", str(res.run_dir / "best"), "--show-hidden", "--secret", "s"],
                           env=env)
    said = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert f"note: evaluating edited files, not candidate {res.best.hash[:12]}" in said and str(best) in said
