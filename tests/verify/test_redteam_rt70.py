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


def _verdicts(kstrata_eval, task: str, *files_then_args) -> list[dict]:
    """``kstrata eval TASK FILE --no-time ARGS`` for each file (Paths first, then the extra arguments)."""
    files = [f for f in files_then_args if isinstance(f, Path)]
    args = [a for a in files_then_args if isinstance(a, str)]
    return [kstrata_eval(task, str(f), "--no-time", *args) for f in files]


def _long_rows(name: str, dist: str, seed: int) -> tuple:
    """(task, x, float64 oracle, reordered-reduction allowances) of suite task ``name`` at its sweep's
    B=17, D=65537 on draw ``dist``."""
    from kstrata.tasks.inputs import apply_distribution

    task = resolve_task(name)
    model, inputs, _, _ = task.instantiate({"B": 17, "D": 65537}, seed)
    x = apply_distribution(inputs, dist, seed)[0]
    oracle = model.double()(x.double())
    extra, _ = reduction_allowance(model.double(), [x.double()], [oracle], torch.float32, seed=seed)
    return task, x, oracle, extra


def _lanes(x: torch.Tensor, lanes: int) -> torch.Tensor:
    """Row sums of float32 ``x`` (B, D): ``lanes`` interleaved float32 accumulators, each left to right,
    then the lanes left to right (numpy's float32 cumsum accumulates in float32)."""
    a = x.numpy()
    a = np.concatenate([a, np.zeros((a.shape[0], (-a.shape[1]) % lanes), np.float32)], 1)
    acc = np.cumsum(a.reshape(a.shape[0], -1, lanes), axis=1, dtype=np.float32)[:, -1, :]
    return torch.from_numpy(np.cumsum(acc, axis=1, dtype=np.float32)[:, -1:].copy())


@pytest.mark.parametrize("dist", ["normal", "uniform", "heavy_tailed", "large", "near_zero"])
def test_a_long_sum_missing_one_term_fails_where_reordered_sums_pass(dist):
    task, x, oracle, extra = _long_rows("sum_dim", dist, 1)
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
    wrong, honest = _verdicts(kstrata_eval, "sum_dim", case / "drops_middle_off_grid.py", case / "sequential_fp32.py")
    assert (wrong["verdict"], wrong["check"]) == ("incorrect", "tolerance"), _said(wrong)
    assert honest["verdict"] == "correct", _said(honest)


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


def _half_gemm(k: int, how: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(float16 candidate, float64 oracle) of x (64, k) @ w (128, k)^T: ``how`` 'fp32' (float32
    accumulation), 'fp16' (float16 accumulation left to right) or 'fp8' (e4m3 per-token activations)."""
    g = torch.Generator().manual_seed(k)
    x = torch.randn(64, k, generator=g).half()
    w = (0.02 * torch.randn(128, k, generator=g)).half()
    oracle = x.double() @ w.double().t()
    if how == "fp16":
        prod = (x.float()[:, None, :] * w.float()[None, :, :]).half().numpy()
        return torch.from_numpy(np.cumsum(prod, axis=-1, dtype=np.float16)[..., -1].copy()), oracle
    xf = x.float()
    if how == "fp8":
        s = xf.abs().amax(1, keepdim=True) / 448
        xf = (xf / s).to(torch.float8_e4m3fn).float() * s
    return (xf @ w.float().t()).half(), oracle


@pytest.mark.parametrize("k", [128, 1024, 4096])
def test_float8_activations_fail_a_half_quant_output_where_half_accumulation_passes(k):
    from kstrata.tasks.meta import Tolerance

    quant = Tolerance(kind="quant", cosine=0.95, rel_l1=0.05, rmse=0.10)  # w4a16's limits
    for how in ("fp32", "fp16"):
        cand, oracle = _half_gemm(k, how)
        assert compare(cand, oracle, oracle.half(), quant).ok, how
    cand, oracle = _half_gemm(k, "fp8")
    r = compare(cand, oracle, oracle.half(), quant)
    assert r.stats["rmse"] < quant.rmse and r.stats["cosine"] > quant.cosine  # inside the aggregate limits
    assert not r.ok and r.stats.get("typical_exceeded"), r.stats


@pytest.mark.slow
@needs_sandbox
def test_rt70_w4a16_on_float8_activations_is_incorrect(kstrata_eval, tmp_path):
    fp8 = CASES / "rt70_w4a16_float8_activations" / "float8_activations.py"
    honest = tmp_path / "honest_fp16.py"  # the same kernel with the float8 path switched off
    honest.write_text(fp8.read_text().replace("if x.shape[0] >= 4 and w.shape[0] >= 8:", "if False:"))
    wrong, right = _verdicts(kstrata_eval, "w4a16_gemm", fp8, honest, "--scope", "small")
    assert (wrong["verdict"], wrong["check"]) == ("incorrect", "tolerance"), _said(wrong)
    assert right["verdict"] == "correct", _said(right)


@pytest.mark.parametrize("dist", ["uniform", "heavy_tailed", "normal", "offset"])
def test_a_long_scan_missing_one_term_fails_on_centred_draws_where_scan_orders_pass(dist):
    from kstrata.verify.summation_orders import _chunked_scan, _hillis_steele

    task, x, oracle, extra = _long_rows("cumsum", dist, 2)
    ref, a = torch.cumsum(x, -1), x.numpy()
    for y in (np.cumsum(a, 1, dtype=np.float32), _chunked_scan(a, 256), _chunked_scan(a, 4096), _hillis_steele(a)):
        assert compare(torch.from_numpy(np.ascontiguousarray(y)), oracle, ref, task.meta.tolerance, extra[0]).ok
    if dist in ("uniform", "heavy_tailed"):  # centred: the term shows (the task's normal draw is rand: one-signed)
        dropped = x.clone()
        dropped[:, x.shape[1] // 2] = 0
        assert not compare(torch.cumsum(dropped, -1), oracle, ref, task.meta.tolerance, extra[0]).ok


@pytest.mark.slow
@needs_sandbox
def test_rt70_scan_dropping_a_term_off_the_grid_is_incorrect(kstrata_eval):
    (d,) = _verdicts(kstrata_eval, "cumsum", CASES / "rt70_scan_drops_a_term" / "drops_middle_off_grid.py")
    assert (d["verdict"], d["check"]) == ("incorrect", "tolerance"), _said(d)
