"""A run stopped before its first verdict (newcomer nc27's runs/int1): ``kstrata retime`` printed
"No correct candidate to re-time" and exited 0 where show and export exit 2 with what to do; and
``kstrata report -o FILE`` wrote the HTML mode 0600, though a report is for handing on (it holds no
secret): now 0666 less the umask, as a plain ``open`` makes a file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kstrata
from kstrata.atomic import umask
from kstrata.cli.main import app
from kstrata.search import Budget, optimize

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import NoProposals  # noqa: E402
from test_export_and_api import RMSNORM_NEW  # noqa: E402


class _Interrupted:
    """Ctrl-C while the first candidate is being verified."""

    def evaluate(self, task, backend, sources):
        raise KeyboardInterrupt


@pytest.fixture()
def stopped_run(tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        optimize(kstrata.load_task("rmsnorm"), "pytorch", NoProposals(), _Interrupted(), "greedy",
                 Budget(evaluations=2), run_dir, initial_sources={"source": RMSNORM_NEW})
    return run_dir


def test_retime_of_a_run_with_no_correct_candidate_exits_as_export_does(stopped_run):
    r = CliRunner().invoke(app, ["retime", str(stopped_run)], env={"COLUMNS": "300"})
    said = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert f"{stopped_run} has no correct candidate to re-time" in said, said
    assert f"kstrata optimize rmsnorm --backend pytorch --resume {stopped_run.resolve()}" in said, said


def test_report_is_written_with_the_umask_mode(stopped_run, tmp_path):
    out = tmp_path / "shared" / "int1.html"
    old = os.umask(0o022)  # the usual one, whatever this process was started with
    try:
        assert umask() == 0o022
        r = CliRunner().invoke(app, ["report", str(stopped_run), "-o", str(out)])
    finally:
        os.umask(old)
    assert r.exit_code == 0, r.output
    assert os.stat(out).st_mode & 0o777 == 0o644
