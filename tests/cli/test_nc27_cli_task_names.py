"""Commands kstrata prints name a shipped suite task by its name, not by its file's path (newcomer
nc27: ``export`` of an unfinished run said "continue the run with: kstrata optimize
/tmp/nc27/kstrata/src/kstrata/tasks/suite/level1/rmsnorm.py ...", and so did ``--resume`` with the
wrong task); another task file stays an absolute path. The edited-best notes of export and eval name
the task (they said ``kstrata optimize TASK``) and say "differs" of one file."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kstrata
from kstrata.backends.registry import get_backend
from kstrata.cli.main import app
from kstrata.search import Budget, optimize
from kstrata.search.loop import other_run
from kstrata.shellarg import resume_command, task_arg
from kstrata.tasks.names import SUITE_DIR

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import NoProposals  # noqa: E402
from test_export_and_api import RMSNORM_NEW, _CorrectUntimed, _NoProposer  # noqa: E402

RMSNORM = next(SUITE_DIR.rglob("rmsnorm.py"))


def test_a_suite_tasks_file_is_named_by_the_task_name(tmp_path):
    assert resume_command(str(RMSNORM), "triton-interp", tmp_path).startswith(
        "kstrata optimize rmsnorm --backend triton-interp --resume ")
    clone = tmp_path / "clone" / "src" / "kstrata" / "tasks" / "suite" / "level1" / "rmsnorm.py"
    clone.parent.mkdir(parents=True)
    shutil.copy(RMSNORM, clone)  # another checkout's copy of the same task
    assert task_arg(str(clone)) == "rmsnorm" and task_arg(kstrata.load_task("rmsnorm")) == "rmsnorm"
    clone.write_text(clone.read_text() + "\n# edited\n")  # no longer the shipped task: its path, absolute
    assert task_arg(str(clone)) == str(clone.resolve())


def test_resume_with_the_wrong_task_names_the_runs_suite_task(tmp_path):
    config = {"task": {"name": "rmsnorm", "digest": "d", "path": str(RMSNORM)}, "backend": "triton-interp"}
    said = other_run(config, kstrata.load_task("softmax"), get_backend("triton-interp"), tmp_path)
    assert "resume it with: kstrata optimize rmsnorm --backend triton-interp --resume" in said, said


class _Interrupted:
    """Ctrl-C while the first candidate is being verified."""

    def evaluate(self, task, backend, sources):
        raise KeyboardInterrupt


def test_export_of_an_unfinished_suite_run_names_the_task(tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        optimize(kstrata.load_task("rmsnorm"), "pytorch", NoProposals(), _Interrupted(), "greedy",
                 Budget(evaluations=2), run_dir, initial_sources={"source": RMSNORM_NEW})
    r = CliRunner().invoke(app, ["export", str(run_dir), "--to", str(tmp_path / "pkg")], env={"COLUMNS": "300"})
    said = " ".join(r.output.split())
    assert r.exit_code == 2 and f"kstrata optimize rmsnorm --backend pytorch --resume {run_dir.resolve()}" in said, said
    assert str(RMSNORM) not in said


def test_the_edited_best_notes_name_the_task_and_say_differs(tmp_path):
    res = optimize(kstrata.load_task("rmsnorm"), get_backend("pytorch"), _NoProposer(), _CorrectUntimed(), "greedy",
                   Budget(evaluations=1), tmp_path / "run", initial_sources={"source": RMSNORM_NEW})
    best = res.run_dir / "best" / "source.py"
    best.write_text(RMSNORM_NEW.replace("torch.rsqrt", "1 / torch.sqrt"))
    env = {"COLUMNS": "300"}
    r = CliRunner().invoke(app, ["export", str(res.run_dir), "--to", str(tmp_path / "pkg")], env=env)
    said = " ".join(r.output.split())
    assert f"{best} differs from candidate" in said and "TASK" not in said, said
    assert "kstrata eval rmsnorm " in said and "kstrata optimize rmsnorm --backend pytorch --initial" in said, said
    # eval stops at an option error right after its note, before verifying
    r = CliRunner().invoke(app, ["eval", "rmsnorm", str(res.run_dir / "best"), "--show-hidden", "--secret", "s"],
                           env=env)
    said = " ".join(r.output.split())
    assert f"{best} differs from the stored text" in said and "TASK" not in said, said
    assert "kstrata optimize rmsnorm --backend pytorch --initial" in said, said


def test_a_bench_cell_not_run_names_its_task():
    from kstrata.search.views import unsupported_note

    assert "`kstrata optimize rmsnorm --backend triton-interp --initial FILE`" in unsupported_note(
        "triton-interp", str(RMSNORM))
