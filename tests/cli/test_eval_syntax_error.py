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


def test_a_file_that_does_not_parse_gets_the_judges_verdict_without_the_judge(tmp_path, monkeypatch):
    """Newcomer nc22: a candidate with a syntax error waited 17-20 s (a busy machine) for a compile_error a
    0.07 s parse tells; the verdict, made before the judge starts, is the one the judge gives."""
    from kstrata.api import evaluate_sources
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for
    from kstrata.tasks.loader import resolve_task

    bad = tmp_path / "broken_syntax.py"
    bad.write_text("import torch\nclass ModelNew(torch.nn.Module:\n    pass\n")
    b = get_backend("pytorch")
    pool = pool_for(b)
    try:
        judged, _ = evaluate_sources(resolve_task("softmax"), b, {"source": bad.read_text()}, pool, time=False)
    finally:
        pool.close()

    def no_judge(*a, **k):
        raise AssertionError("the judge was started for a file that does not parse")

    monkeypatch.setattr("kstrata.cli.eval.evaluate_sources", no_judge)
    r = CliRunner().invoke(app, ["eval", "softmax", str(bad), "--json"])
    assert r.exit_code == 0, r.output
    ev = json.loads(r.output[r.output.index("{"):])
    assert (ev["verdict"], ev["check"], ev["evidence"]) == (judged.verdict.value, judged.check, judged.evidence)
    r = CliRunner().invoke(app, ["eval", "softmax", str(bad), "--preset", "bogus"])
    assert r.exit_code == 2 and "unknown preset 'bogus'" in r.output
