"""Before a verification under Triton's CPU interpreter that may take minutes,
kstrata says how long and how to make it shorter (newcomer nc11: a task
without shapes metadata took 442 s at its scaled public shape with no word)."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.backends.registry import get_backend
from kstrata.cli.main import app
from kstrata.search.budget import Budget
from kstrata.tasks.loader import resolve_task
from kstrata.verify.interp_cost import estimate, slow_note

PLAIN_SOFTMAX = '''import torch
import torch.nn as nn

batch_size = 1024
dim = 512


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''

BROKEN = "import torch\nimport triton\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x)\n        return x\n"


def test_the_estimate_brackets_the_slow_case_and_says_how_to_shorten_it(tmp_path):
    task_file = tmp_path / "softmax_plain.py"
    task_file.write_text(PLAIN_SOFTMAX)
    task, interp = resolve_task(str(task_file)), get_backend("triton-interp")
    est = estimate(task, "full")
    assert est["low_s"] < 442 < est["high_s"] and 120 < est["typical_s"] < 1200  # the newcomer's run: 442 s
    note = slow_note(task, interp, "full", timeout_s=600)
    assert "min" in note and "to make it shorter" in note and "KSTRATA = " in note and "no shapes metadata" in note
    assert slow_note(task, get_backend("pytorch"), "full") is None  # compiled backends: no note
    suite = resolve_task("softmax")
    assert "--scope small" in slow_note(suite, interp, "full")  # a sweep of large shapes: small scope is short
    assert slow_note(suite, interp, "small") is None


def test_eval_warns_before_a_slow_interpreter_verification(tmp_path):
    task_file = tmp_path / "softmax_plain.py"
    task_file.write_text(PLAIN_SOFTMAX)
    cand = tmp_path / "broken.py"  # a compile error ends the verification at once
    cand.write_text(BROKEN)
    r = CliRunner().invoke(app, ["eval", str(task_file), str(cand), "--backend", "triton-interp", "--no-time"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert text.index("warning: triton-interp runs every program") < text.index("compile_error")
    assert "may take about" in text and "to make it shorter" in text


def test_optimize_warns_about_the_full_scope_confirmation(tmp_path, monkeypatch):
    from kstrata.cli import optimize as cli_optimize

    monkeypatch.setattr(cli_optimize, "_budget", lambda option, resume: Budget(evaluations=0))
    r = CliRunner().invoke(app, ["optimize", "softmax", "--backend", "triton-interp", "--budget", "evals=1",
                                 "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "full-scope verification that confirms the run's best" in text and "screening each candidate" not in text


def test_the_estimate_counts_each_tests_fixed_cost():
    """Newcomer nc12: --scope small on rmsnorm was announced at "about 2 s" (bytes only) and took 18.5 s."""
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.interp_cost import FIXED_S, PER_TEST_S, estimate

    est = estimate(resolve_task("rmsnorm"), "small")
    assert est["tests"] > 50
    assert est["low_s"] >= FIXED_S + PER_TEST_S * est["tests"]
    assert 10 <= est["typical_s"] <= 60, est
