"""Red-team round rt80 (2026-12-06): the ``quant`` policy's typical cap of a half-precision output grows
with the reference's sum length instead of a flat 64 units.

int8 per-token activations in a W4A16 GEMM err ~20 units of float16's roundoff of the output RMS at every K;
the flat cap of 64 units (float16 left to right at K=8192) let that W4A8 kernel read correct on every
w4a16_gemm shape (red-team rt76, case ``cases/rt76_w4a16_int8_activations``). The judge now counts the
reference's longest sum (:class:`kstrata.verify.tolerance_reduction.TermCount`) and a half-precision output
of 64 elements or more keeps nine in ten errors within ``1.25 sqrt(K)`` units
(:func:`kstrata.verify.tolerance.half_typical_units`); honest float16 accumulation (``cases/
rt80_w4a16_fp16_accumulation``) errs 0.43 to 0.73 sqrt(K). A float32 quant output may have at most
0.01% of its elements (16 at least, or k times the reference's own count) past four typical caps: a fake
quantization whose last partial row tile shared one scale read correct (rt73 open item, case
``cases/rt80_quant_tail_share``). Also: an NHWC convolution's kernel-position-major
order stays well inside the channel-block bound and its TF32 fails (rt76 open item 3, no change needed).
Log: ``benchmarks/results/redteam_rt80_verify.txt``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from kstrata.sandbox import status
from kstrata.tasks.inputs import apply_distribution
from kstrata.tasks.loader import resolve_task
from kstrata.verify.tolerance import QUANT_TYPICAL_HALF_UNITS, compare, half_typical_units
from kstrata.verify.tolerance_reduction import TermCount, reduction_allowance

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASES = Path(__file__).resolve().parent / "cases"
#: The two small shapes of w4a16_gemm (public tests), where int8 activations are farthest from float16 sums.
SMALL = [{"M": 16, "K": 256, "N": 64}, {"M": 5, "K": 128, "N": 77}]


def _said(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def _draw(shape: dict, dist: str, seed: int) -> tuple:
    """(task, x float16, W float16 (N, K) as the reference dequantizes it, float64 oracle, native output)."""
    task = resolve_task("w4a16_gemm")
    model, inputs, _, _ = task.instantiate(shape, seed)
    x = apply_distribution(inputs, dist, seed)[0]
    q = torch.stack((model.packed & 15, model.packed >> 4), -1).reshape(model.packed.shape[0], -1)
    w = (q.half() - 8) * model.scales.repeat_interleave(model.group, dim=1)
    with torch.no_grad():
        return task, x, w, x.double() @ w.double().t(), model(x)


def _fp16_left_to_right(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Honest: one float16 running sum per output, each (exact float32) product added and rounded, over K."""
    acc = torch.zeros(x.shape[0], w.shape[0], dtype=torch.float16)
    for k in range(x.shape[1]):
        acc = (acc.float() + x[:, k:k + 1].float() * w[:, k].float()).half()
    return acc


def _int8_per_token(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """W4A8: the activations rounded to int8 with a per-row absmax scale, then a float32 product."""
    xf = x.float()
    s = xf.abs().amax(-1, keepdim=True).clamp_min(1e-8) / 127
    return ((torch.round(xf / s).clamp(-127, 127) * s) @ w.float().t()).half()


def test_the_half_precision_cap_grows_with_the_sum_length_within_the_flat_one():
    assert half_typical_units(None, 4096) == QUANT_TYPICAL_HALF_UNITS  # unknown: the flat cap
    assert half_typical_units(128, 63) == QUANT_TYPICAL_HALF_UNITS  # a handful of outputs: the flat cap
    assert half_typical_units(1, 4096) == 8.0  # no sum: a few roundings
    assert half_typical_units(256, 4096) == pytest.approx(20.0)
    assert half_typical_units(8192, 4096) == QUANT_TYPICAL_HALF_UNITS


def test_the_judge_counts_the_reference_gemm_sum_length():
    task = resolve_task("w4a16_gemm")
    model, inputs, _, _ = task.instantiate(SMALL[0], 0)
    with torch.no_grad(), TermCount() as count:
        model.double()(inputs[0].double())
    assert count.max_terms == SMALL[0]["K"]


@pytest.mark.parametrize("shape", SMALL, ids=lambda s: f"K{s['K']}")
@pytest.mark.parametrize("seed", [0, 1])
def test_int8_activations_fail_where_float16_accumulation_passes(shape, seed):
    task, x, w, oracle, native = _draw(shape, "normal", seed)
    tol, k = task.meta.tolerance, shape["K"]
    wrong = _int8_per_token(x, w)
    assert compare(wrong, oracle, native, tol).ok  # before: inside the flat 64 units
    res = compare(wrong, oracle, native, tol, terms=k)
    assert not res.ok and res.stats.get("typical_exceeded"), res.stats
    for honest in (_fp16_left_to_right(x, w), (x.float() @ w.float().t()).half()):
        res = compare(honest, oracle, native, tol, terms=k)
        assert res.ok, res.stats


@pytest.mark.parametrize("dist", ["normal", "uniform", "heavy_tailed"])
@pytest.mark.parametrize("shape", [{"M": 127, "K": 384, "N": 129}, {"M": 2, "K": 128, "N": 77}],
                         ids=["sweep", "few_rows"])
def test_float16_left_to_right_stays_inside_at_the_sweep_shapes(shape, dist):
    task, x, w, oracle, native = _draw(shape, dist, 3)
    res = compare(_fp16_left_to_right(x, w), oracle, native, task.meta.tolerance, terms=shape["K"])
    assert res.ok, res.stats
    assert res.stats["typical_err"] <= 0.6 * res.stats["typical_cap"], res.stats  # a margin, not a near miss


def _tf32(t: torch.Tensor) -> torch.Tensor:
    """float32 rounded to TF32's 10 explicit mantissa bits."""
    return ((t.contiguous().view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


def _position_major(w: torch.Tensor, x: torch.Tensor, ks: int) -> torch.Tensor:
    """A conv2d (no padding, stride 1) as an NHWC implicit GEMM sums it: for each kernel position, all input
    channels, each product (float32) added left to right into one float32 accumulator; ``(C_out, L)``."""
    c = x.shape[1]
    perm = torch.arange(c * ks * ks).reshape(c, ks * ks).t().reshape(-1)  # (position, channel) order
    a = w.reshape(w.shape[0], -1)[:, perm]
    b = torch.nn.functional.unfold(x, ks)[0][perm]
    p = (a[:, :, None] * b[None, :, :]).numpy()
    return torch.from_numpy(np.cumsum(p, axis=1, dtype=np.float32)[:, -1].copy())


@pytest.mark.parametrize("dist", ["normal", "shifted", "heavy_tailed"])
def test_a_kernel_position_major_convolution_passes_and_its_tf32_fails(dist):
    """rt76 open item: the convolution bound sums channel-major partial sums; an honest NHWC order (kernel
    position outer, channels inner) errs ~0.017 of the allowance, the same order on TF32 inputs 6-9x it."""
    shape, seed = {"N": 1, "C_IN": 64, "C_OUT": 8, "H": 12, "W": 12, "KS": 3}, 1
    task = resolve_task("conv2d")
    model, inputs, _, _ = task.instantiate(shape, seed)
    x = apply_distribution(inputs, dist, seed)[0]
    with torch.no_grad():
        oracle = model.double()(x.double())
        extra = reduction_allowance(model, [x.double()], [oracle], torch.float32, seed=seed)[0][0]
        model.float()
        ref, w, b = model(x), model.conv.weight.detach(), model.conv.bias.detach()[:, None]
    honest = (_position_major(w, x, 3) + b).reshape(oracle.shape)
    res = compare(honest, oracle, ref, task.meta.tolerance, extra)
    assert res.ok and float(((honest.double() - oracle).abs() / extra).max()) < 0.1, res.stats
    tf32 = (_position_major(_tf32(w), _tf32(x), 3) + b).reshape(oracle.shape)
    res = compare(tf32, oracle, ref, task.meta.tolerance, extra)
    assert not res.ok and res.stats["wrong"] > 100, res.stats


def _fake_quant(x: torch.Tensor, tile: int = 1, reciprocal: bool = False) -> torch.Tensor:
    """Per-token int8 fake quantization; ``tile`` > 1: the last partial tile of rows shares the tile's absmax
    (case rt73_quant_tail_tile_scale); ``reciprocal``: x times 1/scale (honest, other ties)."""
    s = x.abs().amax(dim=-1, keepdim=True)
    t = x.shape[0]
    if tile > 1 and t % tile:
        s = torch.cat([s[:t - t % tile], s[t - t % tile:].amax().expand(t % tile, 1)])
    s = s / 127
    return torch.round(x * (1.0 / s) if reciprocal else x / s).clamp(-127, 127) * s


@pytest.mark.parametrize("dist", ["normal", "uniform", "shifted"])
def test_a_partial_tile_on_a_coarser_scale_fails_at_a_large_batch(dist):
    """15 of 8191 rows quantized with their tile's absmax (0.04-0.15% of the elements past four typical
    caps, each under the elementwise cap) read correct; honest orders differ at ties only (< 4e-6)."""
    task = resolve_task("fake_quant_per_token")
    tol = task.meta.tolerance
    _, inputs, _, _ = task.instantiate({"T": 8191, "D": 512}, 0)
    x = apply_distribution(inputs, dist, 5)[0]
    oracle, native = _fake_quant(x.double()), _fake_quant(x)
    res = compare(_fake_quant(x, tile=16), oracle, native, tol)
    assert not res.ok and res.stats.get("tail_exceeded"), res.stats
    assert 15 * 512 >= res.stats["wrong"] > 1000, res.stats  # located on the tile's rows
    for honest in (native, _fake_quant(x, reciprocal=True)):
        res = compare(honest, oracle, native, tol)
        assert res.ok and res.stats["tail"] <= 20, res.stats


@pytest.mark.slow
@needs_sandbox
def test_rt76_int8_activations_incorrect_and_float16_accumulation_correct(kstrata_eval):
    wrong = kstrata_eval("w4a16_gemm", str(CASES / "rt76_w4a16_int8_activations" / "int8_activations.py"),
                         "--no-time")
    assert (wrong["verdict"], wrong["check"]) == ("incorrect", "tolerance"), _said(wrong)
    honest = kstrata_eval("w4a16_gemm", str(CASES / "rt80_w4a16_fp16_accumulation" / "fp16_left_to_right.py"),
                          "--no-time")
    assert honest["verdict"] == "correct", _said(honest)
    assert not math.isnan(honest.get("seconds") or 0.0)
