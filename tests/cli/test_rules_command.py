"""`kstrata rules --backend B` prints the integrity rules a candidate there is
held to (newcomer nc14: the README never said which imports a candidate may
use; the list was only in the agents' prompts)."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.agents.prompt import integrity_rules
from kstrata.cli.main import app


def test_rules_print_the_backends_integrity_checks():
    r = CliRunner().invoke(app, ["rules", "--backend", "triton"], env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    for rule in integrity_rules("triton"):
        assert rule.split(":")[0] in r.output
    assert "no_foreign_libraries" in r.output and "no_torch_compute" in r.output


def test_an_unknown_backend_is_one_error():
    r = CliRunner().invoke(app, ["rules", "--backend", "nope"])
    assert r.exit_code == 2 and "unknown backend 'nope'" in r.output
