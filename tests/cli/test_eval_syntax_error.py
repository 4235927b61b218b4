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


def test_no_interpreter_estimate_for_a_file_that_does_not_parse(tmp_path):
    """Newcomer nc21: a triton-interp candidate with a syntax error was first told "about 16 min ... up to
    3.7 h ... more than the --timeout" and then failed in 0.12 s; with a short --timeout it was not even
    started ("not started: even an elementwise kernel would take longer")."""
    bad = tmp_path / "broken_syntax.py"
    bad.write_text("import torch\nclass ModelNew(torch.nn.Module:\n    pass\n")
    r = CliRunner().invoke(app, ["eval", "softmax", str(bad), "--backend", "triton-interp", "--no-time",
                                 "--timeout", "5"], env={"COLUMNS": "300"})
    said = " ".join(r.output.split())
    assert r.exit_code == 0, r.output
    assert "compile_error" in said and "line 2: Python syntax error" in said, said
    assert "runs every program" not in said and "not started" not in said, said
