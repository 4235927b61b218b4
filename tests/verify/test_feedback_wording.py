"""The located feedback of a failed public test speaks the prompt's words and
names only the candidate's own backend (queue round rt56: a tvm-llvm
layernorm whose tail read past the row was told "triton-interp runs them in a
shuffled order on the second run", and "passes at [{'B': 8, 'D': 512}] but
fails at [{'B': 5, 'D': 77}]")."""

from __future__ import annotations

import textwrap

import pytest

from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task
from kstrata.verify import runner

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")

#: rmsnorm, right at D = 512, off by a call count at D = 77: two runs on one input differ
DRIFTS_AT_A_TAIL = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class ModelNew(nn.Module):
        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            y = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight
            return y + 0.01 * self.calls if x.shape[-1] % 16 else y
''')


def test_a_failed_public_test_names_shapes_in_words_and_no_other_backend():
    ev = runner.run_protocol(resolve_task("rmsnorm"), "pytorch", {"source": DRIFTS_AT_A_TAIL}, "wording" * 4,
                             scope="small")
    assert ev["verdict"] == "incorrect", ev
    items = {i["kind"]: i["text"] for i in ev["feedback"]}
    assert "B=8, D=512" in items["shapes"] and "B=5, D=77" in items["shapes"], items
    assert "{" not in items["shapes"], items["shapes"]
    assert "race" in items and "triton" not in items["race"], items.get("race")


def test_a_per_row_factor_also_suggests_a_misplaced_epsilon():
    """Queue round rt56: an RMSNorm with the epsilon added after the rsqrt
    scaled every near_zero row by ~1.4; the per-row-factor hint named only a
    reduction over padded lanes."""
    import torch

    from kstrata.verify.feedback import _row_factor

    x = 1e-3 * torch.randn(4, 64, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    ms = x.pow(2).mean(dim=-1, keepdim=True)
    want = x * torch.rsqrt(ms + 1e-6)
    got = x * (torch.rsqrt(ms) + 1e-6)
    text = _row_factor(got, want, (got - want).abs() > 1e-4 * want.abs())
    assert "one factor of that row" in text and "epsilon" in text, text


def test_a_per_row_factor_also_suggests_a_narrow_accumulator():
    """Queue round rt58 (tilelang-c softmax): a row sum kept in a float16
    accumulator scaled every row by x0.998-x1.002; the per-row-factor hint
    named padded lanes and a misplaced epsilon only (a reduction_growth item
    beside it named the precision)."""
    import torch

    from kstrata.verify.feedback import _row_factor

    x = torch.randn(4, 512, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    want = e / e.sum(dim=-1, keepdim=True)
    acc = torch.zeros(4, 1, dtype=torch.float16)
    for j in range(512):  # the sum in float16, one term at a time, as the kernel summed it
        acc = acc + e[:, j:j + 1].to(torch.float16)
    got = e / acc.double()
    text = _row_factor(got, want, (got - want).abs() > 1e-5 + 1e-4 * want.abs())
    assert "one factor of that row" in text and "narrower type than float32" in text, text
