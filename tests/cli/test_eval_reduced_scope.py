"""A pass short of the full scope does not read as a plain ``correct`` (newcomer
nc12: a Triton kernel wrong only at the nominal shape, which the interpreter
does not run, and one wrong only at sweep shapes ``--scope small`` leaves
out, both read ``correct`` with the reason on the last line)."""

from __future__ import annotations

import json

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


def test_a_full_scope_pass_is_a_plain_correct(tmp_path):
    cand = tmp_path / "relu.py"
    cand.write_text(RELU)
    r = CliRunner().invoke(app, ["eval", "relu", str(cand), "--backend", "pytorch", "--no-time", "--json"])
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["verdict"] == "correct" and out["reduced_scope"] is False


def test_a_full_scope_pass_names_the_public_shapes_it_covered(tmp_path):
    """Newcomer nc13: a full-scope pass said neither whether the nominal shape nor the timing shape was tested."""
    cand = tmp_path / "relu.py"
    cand.write_text(RELU)
    r = CliRunner().invoke(app, ["eval", "relu", str(cand), "--backend", "pytorch", "--no-time", "--json"])
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["verdict"] == "correct"
    assert out["evidence"]["covered"].startswith("the nominal shape B="), out["evidence"]
