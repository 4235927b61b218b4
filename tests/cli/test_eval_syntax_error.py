"""``kstrata eval`` of a candidate with a syntax error names the file, the line
and its code, as ``import`` and ``optimize --initial`` do (newcomer nc15: eval
said only "source: line 2: invalid syntax")."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.cli.main import app


def test_eval_of_a_file_with_a_syntax_error_names_the_file_and_the_code(tmp_path):
    bad = tmp_path / "broken_syntax.py"
    bad.write_text("import torch\nclass ModelNew(torch.nn.Module:\n    pass\n")
    r = CliRunner().invoke(app, ["eval", "softmax", str(bad), "--no-time"], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert f"{bad}, line 2: Python syntax error" in r.output, r.output
    assert "`class ModelNew(torch.nn.Module:`" in r.output, r.output
