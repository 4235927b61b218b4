"""``--memory PATH`` names the agents' skill store on ``optimize`` and on
``memory list``, with ``--db`` accepted on both; an empty store says why it
holds no skill (queue round: two hierarchical runs ranked a 1.57x result, and
``memory list`` showed "0 skill(s)": both timings must be trusted for a skill,
and that run's parent timing was not)."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from kstrata.agents.memory import Attempt, MemoryStore
from kstrata.cli.main import app


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_memory_list_takes_both_names_and_says_why_it_is_empty(tmp_path):
    db = tmp_path / "m.db"
    with MemoryStore(db) as store:
        store.add_attempt("run-1", Attempt(parent="a" * 8, child="b" * 8, level="graph", role="graph-agent",
                                           outcome="proposed"))
    run = CliRunner()
    for name in ("--memory", "--db"):
        out = run.invoke(app, ["memory", "list", name, str(db)], env={"COLUMNS": "200"})
        text = _flat(out.output)
        assert out.exit_code == 0, out.output
        assert "0 skill(s)" in text and "1 proposal(s) of 1 run(s) are recorded" in text
        assert "both timings trusted" in text and "contended machine" in text


def test_optimize_documents_memory_and_accepts_db():
    out = CliRunner().invoke(app, ["optimize", "--help"], env={"COLUMNS": "200"})
    assert re.search(r"--memory\s*,?\s*--db|--db\s*,?\s*--memory", out.output), out.output
