"""A pass short of the full scope does not read as a plain ``correct`` (newcomer
nc12: a Triton kernel wrong only at the nominal shape, which the interpreter
does not run, and one wrong only at sweep shapes ``--scope small`` leaves
out, both read ``correct`` with the reason on the last line)."""

from __future__ import annotations

import json

import pytest

from typer.testing import CliRunner

from kstrata.cli.main import app

RELU = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""


def test_a_small_scope_pass_says_so_in_its_verdict_line_and_json(tmp_path):
    cand = tmp_path / "relu.py"
    cand.write_text(RELU)
    args = ["eval", "relu", str(cand), "--backend", "pytorch", "--scope", "small", "--no-time"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    first = next(line for line in r.output.splitlines() if line.startswith("correct"))
    assert first.startswith("correct at a reduced scope (see scope below)"), r.output  # no nominal_shape line
    assert "scope: small:" in r.output
    out = json.loads(CliRunner().invoke(app, args + ["--json"]).output.strip().splitlines()[-1])
    assert out["verdict"] == "correct" and out["reduced_scope"] is True


@pytest.fixture(scope="module")
def full_scope_json(tmp_path_factory):
    """One full-scope ``--json`` eval of the plain relu, read by the tests below."""
    cand = tmp_path_factory.mktemp("full") / "relu.py"
    cand.write_text(RELU)
    r = CliRunner().invoke(app, ["eval", "relu", str(cand), "--backend", "pytorch", "--no-time", "--json"])
    return json.loads(r.output.strip().splitlines()[-1])


def test_a_full_scope_pass_is_a_plain_correct(full_scope_json):
    assert full_scope_json["verdict"] == "correct" and full_scope_json["reduced_scope"] is False


def test_a_full_scope_pass_names_the_public_shapes_it_covered(full_scope_json):
    """Newcomer nc13: a full-scope pass said neither whether the nominal shape nor the timing shape was tested."""
    assert full_scope_json["verdict"] == "correct"
    assert full_scope_json["evidence"]["covered"].startswith("the nominal shape B="), full_scope_json["evidence"]
