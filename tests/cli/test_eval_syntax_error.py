"""``kstrata eval`` of a candidate with a syntax error names the file, the line
and its code, as ``import`` and ``optimize --initial`` do (newcomer nc15: eval
said only "source: line 2: invalid syntax"); the verdict stays a
``compile_error`` with exit status 0, which scripts and external agents read
from ``--json`` (a syntax error is the candidate's fault, not bad input)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kstrata.cli.main import app


def test_eval_of_a_file_with_a_syntax_error_names_the_file_and_the_code(tmp_path):
    bad = tmp_path / "broken_syntax.py"
    bad.write_text("import torch\nclass ModelNew(torch.nn.Module:\n    pass\n")
    r = CliRunner().invoke(app, ["eval", "softmax", str(bad), "--no-time"], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "compile_error" in r.output
    assert f"hint: {bad}, line 2: Python syntax error" in r.output, r.output
    assert "`class ModelNew(torch.nn.Module:`" in r.output, r.output
    r = CliRunner().invoke(app, ["eval", "softmax", str(bad), "--no-time", "--json"])
    ev = json.loads(r.output[r.output.index("{"):])
    assert r.exit_code == 0 and ev["verdict"] == "compile_error" and "line 2" in ev["hint"]
