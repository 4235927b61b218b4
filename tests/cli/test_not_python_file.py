"""A file whose name ends in another suffix than ``.py`` (``notes.txt``) given
as a task or a one-file candidate is refused as "not a Python file", not
reported as a Python syntax error (newcomer nc22: ``notes.txt:1: syntax
error: invalid syntax``, and in eval a ``compile_error`` with exit 0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app

NOTES = Path(__file__).parent / "cases" / "nc22" / "notes.txt"
TASK = Path(__file__).parent / "cases" / "nc22" / "maxmean.py"


@pytest.mark.parametrize("args", [
    ["tasks", "show", str(NOTES)],
    ["eval", str(TASK), str(NOTES), "--no-time"],
    ["optimize", str(TASK), "--backend", "pytorch", "--initial", str(NOTES), "--budget", "evals=1"],
])
def test_a_text_file_is_not_a_python_file(args, tmp_path):
    if args[0] == "optimize":
        args = [*args, "--out", str(tmp_path / "run")]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    said = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert "notes.txt: not a Python file (its name ends in .txt)" in said, said
    assert "syntax error" not in said
