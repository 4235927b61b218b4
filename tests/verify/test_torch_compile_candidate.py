"""An honest ``torch.compile`` candidate is judged on what it computes (case
rt47_torch_compile_honest: it read rejected for inductor's idle compile
thread and dynamo's dim marks on its output); a smuggled attribute on an
output is still refused."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.sandbox.child import _dynamo_mark

CASE = Path(__file__).parent / "cases" / "rt47_torch_compile_honest" / "relu_torch_compile.py"


def test_an_honest_torch_compile_candidate_is_correct():
    r = CliRunner().invoke(app, ["eval", "relu", str(CASE), "--backend", "pytorch", "--scope", "small", "--no-time",
                                 "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["verdict"] == "correct", (out["check"], out["message"])


def test_only_dynamos_own_marks_holding_dim_indices_are_allowed_on_an_output():
    assert _dynamo_mark("_dynamo_propagated_dynamic_indices", {0, 1})
    assert not _dynamo_mark("_dynamo_propagated_dynamic_indices", {0: torch.zeros(3)})  # a dict smuggles values
    assert not _dynamo_mark("_dynamo_dynamic_indices", [torch.zeros(3)])
    assert not _dynamo_mark("_cached_result", {0})
