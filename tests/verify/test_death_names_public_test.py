"""A candidate that hangs, stalls or crashes at a public test is told which test
(newcomer nc14: a SIGSEGV and a busy loop at the tail shape named none); at a
hidden test it is not (the hidden test's details stay hidden)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kstrata.cli.main import app

SLEEPS_AT = '''import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        if x.shape[-1] == {d}:
            time.sleep(600)
        return torch.relu(x)
'''


def _eval(tmp_path, d: int, monkeypatch) -> dict:
    monkeypatch.setenv("KSTRATA_CANDIDATE_STALL_S", "3")  # a sleeping candidate is ended after 3 s
    cand = tmp_path / f"sleeps_at_{d}.py"
    cand.write_text(SLEEPS_AT.format(d=d))
    r = CliRunner().invoke(app, ["eval", "relu", str(cand), "--scope", "small", "--no-time", "--json"])
    return json.loads(r.output[r.output.index("{"):])


def test_a_stall_at_a_public_test_names_it(tmp_path, monkeypatch):
    ev = _eval(tmp_path, 77, monkeypatch)  # relu's second public shape is (B=5, D=77)
    assert (ev["verdict"], ev["check"]) == ("timeout", "stalled")
    assert ev["evidence"]["test"]["shape"] == {"B": 5, "D": 77} and ev["evidence"]["stage"] == "public"


def test_a_stall_at_a_hidden_test_names_none(tmp_path, monkeypatch):
    ev = _eval(tmp_path, 1, monkeypatch)  # D = 1: a hidden size-1 test only
    assert ev["verdict"] == "timeout" and "test" not in ev["evidence"], ev["evidence"]
