"""A mean's division where no order of its sum rounds: GPU kernels divide with up to 2 ulp of error.

Case ``cases/gpu_div_full_layernorm`` (README there): the shipped Triton LayerNorm read incorrect on an
H100 at a constant row of the ``ties`` draw (B=1, D=3), where the reduction allowance was 0 because every
order of the row's sum is exact, and the mean's division, 1-2 ulp off on the GPU, was multiplied by
``1 / sqrt(eps)``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task
from kstrata.verify.tolerance_reduction import MEAN_DIVISION_U, UNIT_ROUNDOFF, reduction_allowance

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASE = Path(__file__).resolve().parent / "cases" / "gpu_div_full_layernorm"


def _constant_row(c: float = 4.0, d: int = 3) -> tuple:
    model, _, _, _ = resolve_task("layernorm").instantiate({"B": 1, "D": d}, 0)
    m64 = model.double()
    x = torch.full((1, d), c, dtype=torch.float64)
    oracle = m64(x)
    extra, _ = reduction_allowance(m64, [x], [oracle], torch.float32, seed=0)
    return m64, oracle, extra[0]


def test_constant_row_mean_division_is_allowed():
    """The allowance covers the mean off by 2 ulp of c, carried through 1 / sqrt(eps) and the weight."""
    m64, oracle, extra = _constant_row()
    assert extra is not None
    c, u = 4.0, UNIT_ROUNDOFF[torch.float32]
    two_ulp = 2 * (2 * u * c)  # an ulp of c (a power of two) is 2u c
    carried = two_ulp / (m64.eps ** 0.5) * m64.weight.detach().abs()
    assert (extra[0] >= carried).all(), (extra, carried)
    # and it stays a rounding allowance, far below a wrong divisor's error (c/2 * 316 here)
    assert float(extra.max()) < 1e-2
    assert MEAN_DIVISION_U * u * c < 1e-5


def test_plain_sum_of_a_constant_row_still_gets_nothing():
    """Only a mean's division moves: an exact sum (no division) keeps no allowance."""
    class RowSum(torch.nn.Module):
        def forward(self, x):
            return x.sum(-1)

    x = torch.full((1, 3), 4.0, dtype=torch.float64)
    extra, _ = reduction_allowance(RowSum(), [x], [x.sum(-1)], torch.float32, seed=0)
    assert extra[0] is not None and float(extra[0].abs().max()) == 0.0


@needs_sandbox
@pytest.mark.parametrize("candidate, verdict", [("candidate.py", "correct"), ("wrong_divisor.py", "incorrect")])
def test_gpu_like_layernorm_verdicts(kstrata_eval, candidate, verdict):
    """Under the secret of the H100 run (its 18th hidden test is the constant row) and a fresh one."""
    for args in (("--secret", "bench"), ()):
        d = kstrata_eval("layernorm", str(CASE / candidate), "--no-time", "--scope", "small", *args)
        assert d["verdict"] == verdict, (args, d["verdict"], d.get("check"), (d.get("evidence") or {}).get("message"))
