"""Red-team round rt70 (2026-12-06): candidates the verifier judged wrongly, as regression tests.

Case folders ``cases/rt70_*``; every attempt of the round is in ``benchmarks/results/redteam_rt70_verify.txt``.

* A row sum that never added one of 65537 terms (and summed honestly on the grid draw, which a kernel can
  recognise) read correct: the reordered-reduction allowance, ``6 sqrt(n) u sum|x|`` doubled, was 9.5 per
  output where a float32 sum in any usual order errs by 0.003 (``kstrata.verify.summation_orders``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task
from kstrata.verify.tolerance import compare
from kstrata.verify.tolerance_reduction import reduction_allowance

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASES = Path(__file__).resolve().parent / "cases"


def _said(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def _lanes(x: torch.Tensor, lanes: int) -> torch.Tensor:
    """Row sums of float32 ``x`` (B, D): ``lanes`` interleaved float32 accumulators, each left to right,
    then the lanes left to right (numpy's float32 cumsum accumulates in float32)."""
    a = x.numpy()
    a = np.concatenate([a, np.zeros((a.shape[0], (-a.shape[1]) % lanes), np.float32)], 1)
    acc = np.cumsum(a.reshape(a.shape[0], -1, lanes), axis=1, dtype=np.float32)[:, -1, :]
    return torch.from_numpy(np.cumsum(acc, axis=1, dtype=np.float32)[:, -1:].copy())


@pytest.mark.parametrize("dist", ["normal", "uniform", "heavy_tailed", "large", "near_zero"])
def test_a_long_sum_missing_one_term_fails_where_reordered_sums_pass(dist):
    from kstrata.tasks.inputs import apply_distribution

    task = resolve_task("sum_dim")
    model, inputs, _, _ = task.instantiate({"B": 17, "D": 65537}, 1)
    x = apply_distribution(inputs, dist, 1)[0]
    oracle = model.double()(x.double())
    extra, _ = reduction_allowance(model.double(), [x.double()], [oracle], torch.float32, seed=1)
    ref = x.sum(-1, keepdim=True)
    for lanes in (1, 8, 32, 1024):  # honest orders, none of them PyTorch's
        r = compare(_lanes(x, lanes), oracle, ref, task.meta.tolerance, extra[0])
        assert r.ok, (dist, lanes, r.stats)
    keep = torch.ones(x.shape[1], dtype=torch.bool)
    keep[x.shape[1] // 2] = False
    r = compare(x[:, keep].sum(-1, keepdim=True), oracle, ref, task.meta.tolerance, extra[0])
    assert not r.ok, (dist, r.stats)  # inside the old allowance (9.5 per output on the normal draw)


def test_the_bound_stays_where_the_float32_orders_overflow():
    from kstrata.verify.summation_orders import ordered_sum_bound

    x = torch.full((2, 5000), 3e37, dtype=torch.float64)
    b = ordered_sum_bound(x, [1], (2,), 2.0 ** -24, 6.0)
    assert b is not None and bool(torch.isinf(b).all())  # the caller's min keeps its own bound


@pytest.mark.slow
@needs_sandbox
def test_rt70_sum_dropping_a_term_off_the_grid_is_incorrect(kstrata_eval):
    case = CASES / "rt70_sum_drops_a_term"
    d = kstrata_eval("sum_dim", str(case / "drops_middle_off_grid.py"), "--no-time")
    assert d["verdict"] == "incorrect" and d["check"] == "tolerance", _said(d)
    d = kstrata_eval("sum_dim", str(case / "sequential_fp32.py"), "--no-time")
    assert d["verdict"] == "correct", _said(d)


@pytest.mark.parametrize("seed", [0, 1])
def test_an_honest_left_to_right_layernorm_on_the_ties_draw_is_within_the_allowance(seed):
    """Mean and variance moved with both relative signs (case rt70_layernorm_sequential_ties)."""
    from kstrata.tasks.inputs import apply_distribution

    task = resolve_task("layernorm")
    model, inputs, _, _ = task.instantiate({"B": 17, "D": 65537}, seed)
    x = apply_distribution(inputs, "ties", seed)[0]
    m64 = model.double()
    with torch.no_grad():
        oracle = m64(x.double())
        extra, _ = reduction_allowance(m64, [x.double()], [oracle], torch.float32, seed=seed)
        model = model.float()
        mean = _lanes(x, 1) / x.shape[-1]
        var = _lanes((x - mean) ** 2, 1) / x.shape[-1]
        y = (x - mean) / torch.sqrt(var + model.eps) * model.weight + model.bias
        r = compare(y, oracle, model(x), task.meta.tolerance, extra[0])
    assert r.ok, r.stats  # 5 elements out before (max error 2.2e-4 where the allowance was ~4e-6)
