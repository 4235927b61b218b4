"""Red-team round rt76 (2026-12-06): every pair of summing ops is seen with both relative signs, however
many ops a forward has.

rt73 (4ddce99) drew ``1 + ceil(log2(ops))`` sign draws but at most 4 (``MAX_DRAWS``): with more than 8
summing ops, two whose indices agree in their low 3 bits (ops 0 and 8) kept one relative sign in every
draw, and where they feed one output with opposite signs their moves cancelled on about half the rows, so
an honest kernel read wrong there (rt73 open item 4; log ``benchmarks/results/redteam_rt76_verify.txt``).
"""

from __future__ import annotations

import numpy as np
import torch

from kstrata.tasks.loader import resolve_task
from kstrata.verify.tolerance import compare
from kstrata.verify.tolerance_reduction import reduction_allowance, sign_draws


class _NineSums(torch.nn.Module):
    """Nine summing ops of which the first (index 0) and the ninth (index 8) feed one output with opposite
    signs (the same sum twice, so equal moves); the seven between are multiplied by 0."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.sum(-1)
        unused = sum((k * x).sum(-1) for k in range(1, 8))
        c = x.sum(-1)  # the same sum again: with one relative sign, the two moves cancel exactly
        return a - c + 0.0 * unused


def test_ops_zero_and_eight_are_seen_with_both_relative_signs():
    """Before: the honest left-to-right 'a' minus PyTorch's 'c' (0 in float64) read wrong on about half the rows."""
    x = torch.randn(64, 4096, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        oracle = _NineSums()(x.double())
        extra = reduction_allowance(_NineSums(), [x.double()], [oracle], torch.float32, seed=0)[0][0]
        left_to_right = torch.from_numpy(np.cumsum(x.numpy(), axis=1, dtype=np.float32)[:, -1].copy())
        r = compare(left_to_right - x.sum(-1), oracle, _NineSums()(x), resolve_task("sum_dim").meta.tolerance,
                    extra)
    assert r.ok, r.stats


def test_draws_grow_with_the_log_of_the_ops():
    assert [sign_draws(n) for n in (1, 2, 3, 8, 9, 16, 17, 100)] == [2, 2, 3, 4, 5, 5, 6, 8]
