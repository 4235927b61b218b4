"""``--resume`` with a task file whose text changed since the run started says
so and what to do (newcomer nc16: "error: RUN is a run of scaled_tanh on
triton-interp, not scaled_tanh on triton-interp")."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from kstrata.backends.registry import get_backend
from kstrata.cli.main import app
from kstrata.search import Budget, optimize
from kstrata.tasks.loader import resolve_task

TASK = '''import torch
import torch.nn as nn

B, D = 8, 16


class Model(nn.Module):
    def forward(self, x):
        return torch.tanh(x){extra}


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
'''
SRC = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"


@pytest.fixture
def run(tmp_path):
    task = tmp_path / "scaled_tanh.py"
    task.write_text(TASK.format(extra=""))
    judge = SimpleNamespace(evaluate=lambda t, b, s: ({"verdict": "correct", "feedback": []}, None))
    proposer = SimpleNamespace(name="none", propose=lambda *a, **k: [])
    run = optimize(resolve_task(str(task)), get_backend("pytorch"), proposer, judge, "greedy", Budget(evaluations=1),
                   tmp_path / "run", initial_sources={"source": SRC}).run_dir
    return task, run


def _resume(task, run):
    return CliRunner().invoke(app, ["optimize", str(task), "--backend", "pytorch", "--resume", str(run)],
                              env={"COLUMNS": "400"})


def test_the_changed_task_file_is_named(run):
    task, run_dir = run
    task.write_text(TASK.format(extra=" + 1"))
    r = _resume(task, run_dir)
    assert r.exit_code == 2, r.output
    assert f"the task file {task} changed since {run_dir} started" in r.output, r.output
    assert "restore the file's earlier text to resume it, or start a new run" in r.output
    assert "not scaled_tanh on pytorch" not in r.output


def test_another_file_of_the_same_task_name_names_the_runs_file(run, tmp_path):
    task, run_dir = run
    other = tmp_path / "mod" / "scaled_tanh.py"
    other.parent.mkdir()
    other.write_text(TASK.format(extra=" + 1"))
    r = _resume(other, run_dir)
    assert r.exit_code == 2, r.output
    assert f"is a run of the task file {task}, and {other} differs from it" in r.output, r.output
    assert f"kstrata optimize {task} --backend pytorch --resume {run_dir}" in r.output


def test_export_of_a_run_whose_task_file_changed_says_what_to_do(run, tmp_path):
    task, run_dir = run
    task.write_text(TASK.format(extra=" + 1"))
    r = CliRunner().invoke(app, ["export", str(run_dir), "--to", str(tmp_path / "pkg")], env={"COLUMNS": "400"})
    assert r.exit_code == 2, r.output
    assert f"task file {task} changed since the run started" in r.output
    assert "restore that text to use the run" in r.output, r.output
