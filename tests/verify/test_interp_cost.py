"""Before a verification under Triton's CPU interpreter that may take minutes,
kstrata says how long and how to make it shorter (newcomer nc11: a task
without shapes metadata took 442 s at its scaled public shape with no word)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kstrata.backends.registry import get_backend
from kstrata.cli.main import app
from kstrata.search.budget import Budget
from kstrata.tasks.loader import resolve_task
from kstrata.verify.interp_cost import busy_factor as REAL_BUSY_FACTOR
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

@pytest.fixture(autouse=True)
def _idle_machine(monkeypatch):
    """The estimates below are an idle machine's (a loaded one scales them: busy_factor)."""
    from kstrata.verify import interp_cost

    monkeypatch.setattr(interp_cost, "busy_factor", lambda: 1.0)


#: fails as it loads (a compile_error at once); a syntax error is refused before anything runs
BROKEN = ("import torch\nimport triton\n\nraise RuntimeError('fails as it loads')\n\n\n"
          "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n")


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
    cand = tmp_path / "broken.py"  # a load failure ends the verification at once
    cand.write_text(BROKEN)
    r = CliRunner().invoke(app, ["eval", str(task_file), str(cand), "--backend", "triton-interp", "--no-time"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert text.index("warning: triton-interp runs every program") < text.index("compile_error")
    assert "an estimate" in text and "to make it shorter" in text


def test_optimize_warns_about_the_full_scope_confirmation(tmp_path, monkeypatch):
    from kstrata.cli import optimize as cli_optimize

    monkeypatch.setattr(cli_optimize, "_budget", lambda option, resume: Budget(evaluations=0))
    r = CliRunner().invoke(app, ["optimize", "softmax", "--backend", "triton-interp", "--budget", "evals=1",
                                 "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "full-scope verification (the sweep's shapes and perturbed sweep shapes) that confirms the run's best" \
        in text and "screening each candidate" not in text


def test_the_estimate_counts_each_tests_fixed_cost():
    """Newcomer nc12: --scope small on rmsnorm was announced at "about 2 s" (bytes only) and took 18.5 s."""
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.interp_cost import FIXED_S, PER_TEST_S, estimate

    est = estimate(resolve_task("rmsnorm"), "small")
    assert est["tests"] > 50
    assert est["low_s"] >= FIXED_S + PER_TEST_S * est["tests"]
    assert 10 <= est["typical_s"] <= 60, est


def test_a_busy_machine_scales_the_estimate_and_says_so(monkeypatch):
    """newcomer nc14: at load 4-8 on 2 CPUs, 'about 62 s' took 277 s."""
    from kstrata.verify import interp_cost

    task = resolve_task("softmax")
    idle = estimate(task, "full")
    monkeypatch.setattr(interp_cost, "busy_factor", lambda: 3.0)
    busy = estimate(task, "full")
    assert busy["busy"] == 3.0 and busy["typical_s"] == pytest.approx(3 * idle["typical_s"], rel=0.01)
    note = slow_note(task, get_backend("triton-interp"), "full")
    assert note is not None and "load now (3.0 times its CPUs by the " in note


def test_busy_factor_is_the_load_over_the_cpus(monkeypatch):
    from kstrata.verify import interp_cost

    monkeypatch.setattr(interp_cost, "_LOAD", [])  # no reading kept from elsewhere
    monkeypatch.setattr(interp_cost, "LOAD_KEPT_S", 0.0)
    monkeypatch.setattr(interp_cost, "_runnable_now", lambda: None)
    monkeypatch.setattr(interp_cost.os, "getloadavg", lambda: (9.0, 9.5, 0.0))
    monkeypatch.setattr("kstrata.execute.cpus.allowed_cpu_count", lambda: 2)
    assert REAL_BUSY_FACTOR() == 4.5
    monkeypatch.setattr(interp_cost.os, "getloadavg", lambda: (0.5, 0.7, 0.0))
    assert REAL_BUSY_FACTOR() == 1.0  # never below an idle machine's


def test_eval_does_not_start_a_verification_that_would_time_out(tmp_path):
    """newcomer nc15: estimated 29 min against --timeout 600, eval started anyway, ran 611 s and ended
    `timeout` with no test run; now it says so before it starts, and how to run it anyway."""
    task_file = tmp_path / "softmax_plain.py"
    task_file.write_text(PLAIN_SOFTMAX)
    cand = tmp_path / "broken.py"
    cand.write_text(BROKEN)
    args = ["eval", str(task_file), str(cand), "--backend", "triton-interp", "--no-time"]
    r = CliRunner().invoke(app, [*args, "--timeout", "60"], env={"COLUMNS": "400"})
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and text.startswith("error: not started: even an elementwise kernel"), r.output
    assert estimate(resolve_task(str(task_file)), "full")["low_s"] > 60
    assert "more than the --timeout of 60 s" in text and "to try anyway" in text and "KSTRATA = " in text
    took = estimate(resolve_task(str(task_file)), "full")["typical_s"]
    suggested = int(text.split("e.g. --timeout ")[1].split()[0])
    assert suggested > took
    r = CliRunner().invoke(app, [*args, "--timeout", str(suggested)])
    assert r.exit_code == 0 and "compile_error" in r.output, r.output
