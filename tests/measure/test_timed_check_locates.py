"""What a wrong timed call is told (queue round rt58): an honest log-softmax
computing y = x - (m + log s) passed verification, then failed a timing probe
on the 'far' draw at the timed shape (B=1024, D=1024), and the agent read
"2 of 1048576 elements wrong; ... The candidate computes another way when
timed than when verified": no element, value, error or shape, and a charge of
cheating for a plain rounding error that grows with the rows' magnitude."""

from __future__ import annotations

import torch

from kstrata.measure.candidate import _checker
from kstrata.tasks.loader import resolve_task


def _reassociated_log_softmax(x: torch.Tensor) -> torch.Tensor:
    """log_softmax as x - (m + log s) in float32: log s is lost where |m| is large."""
    m = x.max(dim=-1, keepdim=True).values
    s = torch.exp(x - m).sum(dim=-1, keepdim=True)
    return x - (m + torch.log(s))


def test_a_wrong_timed_output_says_where_and_by_how_much():
    task = resolve_task("log_softmax")
    module = task.load_module({"B": 4, "D": 64})
    model = module.Model(*module.get_init_inputs())
    # a fixed draw: whether x - (m + log s) leaves the tolerance depends on how m + log s rounds, and 4 of
    # 40 unseeded draws stayed inside it (the test failed once in a full run); seed 1's far row does not
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(1))
    x[1] += 1e5  # a row moved far, as the 'far' draw moves it
    check = _checker(task, model, [[x]])
    assert check(0, [_reassociated_log_softmax(x)]) is not None
    problem = check(0, [_reassociated_log_softmax(x)])
    assert "elements wrong (max error " in problem, problem
    assert "at the shape (4, 64)" in problem, problem
    assert "first wrong elements (index: expected -> got): [1, " in problem, problem  # the far row
    honest = torch.log_softmax(x, dim=-1)
    assert check(0, [honest]) is None
