"""``--llm`` with the built-in proposer is refused, not ignored (newcomer nc17: a run with
``--llm openai:...`` and no ``--proposer`` used the rules and said nothing of the model)."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.cli.main import app


def test_llm_without_an_llm_proposer_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--llm", "openai:gpt-4o",
                                 "--out", str(out)], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert "--llm openai:gpt-4o is read by --proposer llm or hierarchical only" in text and "add --proposer llm" in text
    assert not out.exists()
