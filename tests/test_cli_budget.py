"""``kstrata optimize --budget``: bad limits refused; a resumed run keeps its own budget."""

from __future__ import annotations

import pytest

from kstrata.cli.optimize import DEFAULT_BUDGET, OptionError, _budget, parse_budget
from kstrata.store.run_store import RunStore


@pytest.mark.parametrize("bad", ["evals=-1", "evals=1.5", "wall=-3"])
def test_negative_or_fractional_limits_are_refused(bad):
    with pytest.raises(OptionError):
        parse_budget(bad)


def test_budget_default_and_resume(tmp_path):
    assert _budget(None, None).evaluations == parse_budget(DEFAULT_BUDGET)["evaluations"]
    assert _budget("evals=5", None).evaluations == 5
    with RunStore.create(tmp_path / "run", config={"budget": {"evaluations": 8}}) as _:
        pass
    # no --budget on --resume: the run's own total, not the default
    assert _budget(None, tmp_path / "run").evaluations == 8
    assert _budget("evals=12", tmp_path / "run").evaluations == 12


def test_a_limit_not_given_keeps_the_default():
    """newcomer nc14: --budget wall=60 ran with evals=100 (the Budget class's default), --help said 40."""
    b = _budget("wall=60", None)
    assert b.wall_clock_s == 60 and b.evaluations == parse_budget(DEFAULT_BUDGET)["evaluations"]
