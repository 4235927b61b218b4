"""``kstrata eval TASK FILE.json`` takes the ``{level: source text}`` JSON file
that ``optimize --initial`` takes, through the same reader (newcomer nc22:
``eval rmsnorm tvm.json --backend tvm-llvm`` was refused as "a single file for
tvm-llvm must be a TVM source-level file"). Read as text, never imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kstrata.api import read_candidate
from kstrata.cli.main import app

CASE = Path(__file__).parent / "cases" / "nc22" / "tvm_rms_good.json"


def test_eval_reads_a_json_of_level_sources_as_optimize_initial_does():
    sources, backend = read_candidate(CASE, "tvm-llvm")
    assert backend == "tvm-llvm" and sources == json.loads(CASE.read_text())


@pytest.mark.parametrize(("text", "said"), [
    ('{"graph": "x", "nosuch": "y"}', "levels ['nosuch'] are not levels of tvm-llvm"),
    ('{"schedule": 42}', "JSON int, not source text"),
    ("[1]", "a JSON list, not an object"),
    ("{", "not JSON"),
])
def test_a_bad_json_candidate_is_one_clear_error(text, said, tmp_path):
    bad = tmp_path / "c.json"
    bad.write_text(text)
    r = CliRunner().invoke(app, ["eval", "rmsnorm", str(bad), "--backend", "tvm-llvm", "--no-time"],
                           env={"COLUMNS": "300"})
    assert r.exit_code == 2 and said in " ".join(r.output.split()), r.output
