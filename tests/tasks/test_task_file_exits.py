"""A task file that exits or raises KeyboardInterrupt while importing is one
clear error (exit status 2), not a silent exit with the file's status
(red-team round of 2026-12-03: ``sys.exit(3)`` ended ``kstrata eval`` with rc 3
and no message, and ended ``kstrata tasks list --path DIR`` with nothing listed)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app

BODY = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("stmt,kind", [("import sys\nsys.exit(3)\n", "SystemExit"),
                                       ("raise KeyboardInterrupt\n", "KeyboardInterrupt")])
def test_a_task_file_that_exits_is_one_error(tmp_path, stmt, kind):
    task = tmp_path / "exits.py"
    task.write_text(BODY + stmt)
    runner = CliRunner()
    res = runner.invoke(app, ["tasks", "show", str(task)])
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert f"failed to import: {kind}" in res.output and "not exit" in res.output, res.output
    # a listing names the file it skipped and goes on
    res = runner.invoke(app, ["tasks", "list", "--path", str(tmp_path)], terminal_width=400)
    assert res.exit_code == 0 and "skipped:" in res.output and f"failed to import: {kind}" in res.output, \
        res.output
    assert "Traceback" not in res.output
