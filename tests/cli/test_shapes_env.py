"""A bad ``$KSTRATA_SHAPES`` is the environment's mistake, said once (newcomer
nc14: ``KSTRATA_SHAPES=bogus`` read "... its small shapes cannot be worked out
...; fix get_inputs() or the shapes metadata", blaming a correct task file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import check_reference, load_task

TASK = """import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
N = 1000
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
"""


def test_a_bad_value_is_one_error_that_names_the_variable(tmp_path: Path):
    task = tmp_path / "plain_relu.py"
    task.write_text(TASK)
    r = CliRunner().invoke(app, ["tasks", "show", str(task)], env={"KSTRATA_SHAPES": "bogus", "COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert "KSTRATA_SHAPES='bogus'" in r.output and "'scaled' or 'nominal'" in r.output
    assert "get_inputs" not in r.output and "Traceback" not in r.output
    ok = CliRunner().invoke(app, ["tasks", "show", str(task)], env={"KSTRATA_SHAPES": "scaled", "COLUMNS": "300"})
    assert ok.exit_code == 0, ok.output


def test_the_library_says_the_same_without_blaming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    task = tmp_path / "plain_relu2.py"
    task.write_text(TASK.replace("1000", "1001"))
    monkeypatch.setenv("KSTRATA_SHAPES", "bogus")
    with pytest.raises(TaskError) as got:
        check_reference(load_task(task))
    assert "KSTRATA_SHAPES='bogus'" in str(got.value) and "get_inputs" not in str(got.value)
