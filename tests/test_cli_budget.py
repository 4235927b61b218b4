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
