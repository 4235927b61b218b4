"""What ``kstrata eval`` says: a headline that counts NaN/Inf outputs (the
judge's max error covers finite elements only), a top-level ``message`` in
``--json``, and the shape the candidate was timed at (``--timing-shape``,
``fit`` on CPU by default, as ``kstrata optimize``)."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from kstrata.cli.eval import headline
from kstrata.cli.main import app

NO_MAX = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        e = torch.exp(x)
        return e / e.sum(dim=-1, keepdim=True)
'''

GOOD = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        m = x.max(dim=-1, keepdim=True).values
        e = torch.exp(x - m)
        return e / e.sum(dim=-1, keepdim=True)
'''


def _ev(wrong, nonfinite, max_err=1.08e-70):
    msg = f"{wrong} of 4096 elements outside tolerance (max error {max_err:.3g})"
    return SimpleNamespace(evidence={"message": msg, "stats": {"wrong": wrong, "total": 4096, "max_err": max_err,
                                                               "nonfinite_wrong": nonfinite}})


def test_headline_counts_nan_and_inf_outputs():
    assert headline(_ev(788, 788)) == "788 of 4096 elements outside tolerance, all NaN/Inf where the oracle is finite"
    assert headline(_ev(800, 788, 0.5)) == ("800 of 4096 elements outside tolerance: 788 NaN/Inf where the oracle "
                                            "is finite, max error 0.5 over the rest")
    assert headline(_ev(12, 0, 0.5)) == "12 of 4096 elements outside tolerance (max error 0.5)"


def _eval(tmp_path, text, *args):
    cand = tmp_path / "cand.py"
    cand.write_text(text)
    r = CliRunner().invoke(app, ["eval", "softmax", str(cand), "--backend", "pytorch", "--scope", "small",
                                 "--json", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.output.strip().splitlines()[-1])


def test_eval_json_has_a_top_level_message_naming_the_nans(tmp_path):
    out = _eval(tmp_path, NO_MAX, "--no-time")
    assert out["verdict"] == "incorrect" and out["evidence"]["stats"]["nonfinite_wrong"] > 0
    assert out["message"].endswith("all NaN/Inf where the oracle is finite")


@pytest.mark.slow
def test_eval_times_at_the_timing_shape_and_says_so(tmp_path):
    out = _eval(tmp_path, GOOD, "--timing-shape", "B=64,D=128", "--budget-ms", "200")
    # a test an all-zero or constant output passes too (softmax over one column is 1.0) is told apart, not counted
    assert out["verdict"] == "correct" and re.match(r"\d+ public and \d+ hidden tests pass(;|$)", out["message"])
    assert out["timing"]["shape"] == {"B": 64, "D": 128} and out["timing"]["speedup"] > 0
    r = CliRunner().invoke(app, ["eval", "softmax", str(tmp_path / "cand.py"), "--timing-shape", "Q=3"])
    assert r.exit_code == 2 and "--timing-shape" in r.output and "no shape variable 'Q'" in r.output


def test_eval_times_at_the_fitted_shape_by_default_on_a_cpu(tmp_path, monkeypatch):
    """The README's quick check must not verify and time softmax at its nominal
    4096x4096 (what made a correct candidate a 'timeout' at --timeout 30)."""
    from kstrata.cli import eval as eval_cli
    from kstrata.tasks.loader import resolve_task
    from kstrata.tasks.scaling import fitted_shape

    seen = {}

    def fake(task, backend, sources, pool, **kw):
        seen.update(kw)
        return SimpleNamespace(correct=True, verdict=SimpleNamespace(value="correct"), check=None, evidence={},
                               warnings=[], feedback=[], public_tests=0, hidden_tests=0, seconds=0.0,
                               to_dict=lambda: {"verdict": "correct"}), None

    monkeypatch.setattr(eval_cli, "evaluate_sources", fake)
    cand = tmp_path / "cand.py"
    cand.write_text(GOOD)
    r = CliRunner().invoke(app, ["eval", "softmax", str(cand), "--backend", "pytorch", "--json"])
    assert r.exit_code == 0, r.output
    task = resolve_task("softmax")
    assert seen["timing_shape"] == fitted_shape(task) != task.nominal_shape


def test_help_shows_no_bool_type_after_flags():
    r = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "--json" in r.output and "--no-time" in r.output
    assert "<bool>" not in r.output and "<float>" in r.output  # value options keep their type


def test_an_outside_domain_evidence_line_says_what_it_is(monkeypatch, tmp_path):
    """Newcomer nc22: a correct verdict printed "outside_domain: a hidden test: output 0" with no word of what
    it meant."""
    from typer.testing import CliRunner

    from kstrata.cli.main import app
    from kstrata.verdict import Verdict
    from kstrata.verify.result import Evaluation

    def judged(task, backend, sources, pool, **k):
        return Evaluation(Verdict.CORRECT, evidence={"outside_domain": ["a hidden test: output 0"]},
                          public_tests=2, hidden_tests=3, task=task.name, backend=backend.name), None

    monkeypatch.setattr("kstrata.cli.eval.evaluate_sources", judged)
    cand = tmp_path / "c.py"
    cand.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n")
    r = CliRunner().invoke(app, ["eval", "softmax", str(cand), "--no-time"], env={"COLUMNS": "300"})
    said = " ".join(r.output.replace("|", " ").split())  # a wrapped evidence line goes on after '|'
    assert r.exit_code == 0, r.output
    assert "outside_domain (tests where the task's own reference misses the float64 oracle" in said
    assert "a hidden test: output 0" in said
