"""Errors that say what to do next (newcomer nc18): an unknown backend names
the close ones, a task file's syntax error shows the code at fault (as a
candidate's does), and ``kstrata report`` of a folder that is neither a run
nor a bench says which folders it takes."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kstrata.backends.registry import UnknownBackendError, get_backend
from kstrata.cli.main import app
from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import resolve_task


@pytest.mark.parametrize(("name", "close"), [("cuda", "tvm-cuda or pytorch-cuda"), ("trition", "triton")])
def test_an_unknown_backend_names_the_close_ones(name, close):
    with pytest.raises(UnknownBackendError, match=f"did you mean {close}") as e:
        get_backend(name)
    assert "known backends: pytorch" in str(e.value) and "kstrata env" in str(e.value)


def test_a_task_files_syntax_error_shows_its_code(tmp_path):
    f = tmp_path / "t.py"
    f.write_text("import torch\n\n\nclass Model(torch.nn.Module):\n    def __init__(self, dim)\n        pass\n")
    with pytest.raises(TaskError, match=r"t\.py:5: syntax error: expected ':': `def __init__\(self, dim\)`"):
        resolve_task(str(f))


def test_report_of_a_folder_that_is_no_run_says_what_it_takes(tmp_path):
    r = CliRunner().invoke(app, ["report", str(tmp_path / "nosuch")])
    assert r.exit_code == 2
    assert "give a run's directory (the --out of kstrata optimize)" in " ".join(r.output.split())
