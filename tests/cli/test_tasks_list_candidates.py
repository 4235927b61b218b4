"""`tasks list --path DIR` counts candidate files (ModelNew, no Model) in one
line instead of a 'skipped: missing Model, ...' line each (newcomer nc14); a
file that is neither is still named with its problem."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.tasks.loader import resolve_task


def test_candidate_files_are_counted_not_listed_as_broken_tasks(tmp_path):
    (tmp_path / "relu.py").write_text(resolve_task("relu").source)
    for i in range(3):
        (tmp_path / f"cand{i}.py").write_text("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n")
    (tmp_path / "junk.py").write_text("x = 1\n")
    r = CliRunner().invoke(app, ["tasks", "list", "--path", str(tmp_path)], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "skipped 3 candidate file(s)" in r.output and "cand0.py" in r.output
    assert r.output.count("skipped:") == 1 and "junk.py: missing Model" in r.output
    assert "relu" in r.output
