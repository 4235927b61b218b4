"""A ``--budget`` limit of 0 that lets a run do nothing (``evals=0``, ``wall=0``)
is refused like a negative one: one clear error, exit status 2, no run directory."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.search.budget import Budget, BudgetError, parse_budget


@pytest.mark.parametrize("text", ["evals=0", "evaluations=0", "wall=0", "wall_s=0.0"])
def test_zero_limits_that_leave_nothing_to_do_are_refused(text):
    with pytest.raises(BudgetError, match="would evaluate nothing.*give a positive limit"):
        parse_budget(text)


def test_zero_limits_that_still_evaluate_the_start_are_accepted():
    # calls=0 (and tokens, cost): no proposer call, but the initial candidate is evaluated
    assert parse_budget("evals=3,calls=0,cost=0") == {"evaluations": 3, "proposer_calls": 0, "cost_usd": 0.0}
    assert Budget(evaluations=0).evaluations == 0  # the Python API keeps its own zero


def test_optimize_refuses_evals_0_before_making_a_run_directory(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["optimize", "relu", "--budget", "evals=0", "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "error: --budget evals=0: a run with 0 evaluations would evaluate nothing" in " ".join(r.output.split())
    assert "Traceback" not in r.output and not out.exists()


@pytest.mark.parametrize("text", ["evals=0", "evals=inf"])
def test_the_refusal_says_what_a_key_left_out_means(text):
    """newcomer nc16: it said "leave the key out for no limit", but a key left out keeps optimize's default
    (evals=40); what it says now is what optimize does."""
    from kstrata.cli.optimize import DEFAULT_BUDGET, _budget

    with pytest.raises(BudgetError) as e:
        parse_budget(text)
    assert "leave the key out for no limit" not in str(e.value)
    assert f"kstrata optimize runs {DEFAULT_BUDGET}" in str(e.value)
    limit = int(DEFAULT_BUDGET.removeprefix("evals="))
    assert _budget("wall=60", None).evaluations == limit  # a key left out: the default's, not unlimited
