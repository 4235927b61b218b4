"""The ``quant`` policy's elementwise cap (:func:`kstrata.verify.tolerance.compare`):
an output missing outright fails; one quantization step that the task's own
reference also rounds the other way passes (fake_quant_per_token on the H200,
2026-12-03: a heavy-tailed row's step is above the RMS-based cap, and fp32 and
fp64 round a tie of ``x / scale`` differently)."""

from __future__ import annotations

import torch

from kstrata.tasks.meta import Tolerance
from kstrata.verify.tolerance import QUANT_ELEMENT_K, compare

TOL = Tolerance(kind="quant", cosine=0.99, rel_l1=0.05, rmse=0.05)


def _fake_quant_rows(x: torch.Tensor) -> torch.Tensor:
    """Symmetric int8 fake quantization with one scale per row (per token)."""
    scale = x.abs().amax(dim=1, keepdim=True) / 127
    return (x / scale).round().clamp(-127, 127) * scale


def test_a_step_the_reference_itself_rounds_the_other_way_is_allowed():
    torch.manual_seed(0)
    x = torch.randn(64, 256, dtype=torch.float64)
    x[3, 5] = 400.0  # a heavy-tailed row: its step (400 / 127 ~ 3.1) is far above the RMS of the output
    oracle = _fake_quant_rows(x)
    step = float(x[3].abs().max() / 127)
    rms = float(oracle.pow(2).mean().sqrt())
    assert step > QUANT_ELEMENT_K * TOL.rmse * rms  # the case: one step is over the RMS-based cap
    native = oracle.clone()
    native[3, 7] += step  # the reference rounds one tie the other way in its dtype
    cand = oracle.clone()
    cand[3, 9] -= step  # and the candidate another: as far off as the reference, no further
    ok = compare(cand.float(), oracle, native.float(), TOL)
    assert ok.ok, ok.stats
    # the same candidate against an exact reference: nothing excuses the step
    assert not compare(cand.float(), oracle, oracle.float(), TOL).ok


def test_an_output_never_written_still_fails_beside_an_exact_reference():
    torch.manual_seed(1)
    x = torch.randn(64, 256, dtype=torch.float64)
    x[-1, -8:] = 2.5  # the last tile holds values well above the RMS
    oracle = _fake_quant_rows(x)
    cand = oracle.clone()
    cand[-1, -8:] = 0  # and is never written
    res = compare(cand.float(), oracle, oracle.float(), TOL)
    assert not res.ok and res.stats["wrong"] >= 8
    assert res.stats["element_cap"] == QUANT_ELEMENT_K * TOL.rmse * float(oracle.pow(2).mean().sqrt())
