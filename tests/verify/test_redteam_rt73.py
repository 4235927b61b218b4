"""Red-team round rt73 (2026-12-06): candidates the verifier judged wrongly, as regression tests.

Case folders ``cases/rt73_*``; every attempt of the round is in ``benchmarks/results/redteam_rt73_verify.txt``.

* A GEMV that read A and x as TF32 for 4096 < K < 8192 read correct over 139 tests: a matrix product's
  reordered-reduction allowance was ``12 sqrt(K) u |A||x|``, ~600x a float32 product's error in any usual
  order on centred data (:mod:`kstrata.verify.product_orders`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from kstrata.sandbox import status
from kstrata.tasks.inputs import apply_distribution
from kstrata.tasks.loader import resolve_task
from kstrata.verify.tolerance import compare
from kstrata.verify.tolerance_reduction import reduction_allowance

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASES = Path(__file__).resolve().parent / "cases"


def _said(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def _tf32(t: torch.Tensor) -> torch.Tensor:
    """float32 rounded to TF32's 10 explicit mantissa bits (to nearest, ties away)."""
    return ((t.contiguous().view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


def _orders(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    """Honest float32 products ``a (M, K) @ b (K, N)`` in kernel orders other than PyTorch's: left to right
    over K, 32-wide k-tiles (each left to right, the tiles' totals left to right), 32 interleaved lanes
    then the lanes left to right, and float64 rounded once."""
    p = (a[:, :, None] * b[None, :, :]).numpy()  # (M, K, N) float32 products, each rounded once
    m, k, n = p.shape
    t = np.concatenate([p, np.zeros((m, (-k) % 32, n), np.float32)], 1).reshape(m, -1, 32, n)
    tiles = np.cumsum(np.cumsum(t, axis=2, dtype=np.float32)[:, :, -1, :], axis=1, dtype=np.float32)[:, -1]
    lanes = np.cumsum(np.cumsum(t, axis=1, dtype=np.float32)[:, -1], axis=1, dtype=np.float32)[:, -1]
    return {"left_to_right": torch.from_numpy(np.cumsum(p, axis=1, dtype=np.float32)[:, -1].copy()),
            "k_tiles": torch.from_numpy(tiles.copy()), "lanes": torch.from_numpy(lanes.copy()),
            "float64": (a.double() @ b.double()).float()}


def _judged(name: str, shape: dict, dist: str, seed: int) -> tuple:
    """(task, inputs, float64 oracle, float32 reference, allowance) of suite task ``name``."""
    task = resolve_task(name)
    model, inputs, _, _ = task.instantiate(shape, seed)
    inputs = apply_distribution(inputs, dist, seed)
    m64 = model.double()
    with torch.no_grad():
        oracle = m64(*[x.double() for x in inputs])
        extra, _ = reduction_allowance(m64, [x.double() for x in inputs], [oracle], torch.float32, seed=seed)
        return task, inputs, oracle, model.float()(*inputs), extra[0]


@pytest.mark.parametrize("dist", ["normal", "uniform", "heavy_tailed", "large", "near_zero"])
def test_a_tf32_gemv_fails_where_float32_orders_pass(dist):
    task, (a, x), oracle, ref, extra = _judged("gemv", {"M": 1024, "K": 4099}, dist, 1)
    for how, y in _orders(a, x).items():
        r = compare(y, oracle, ref, task.meta.tolerance, extra)
        assert r.ok, (dist, how, r.stats)
    r = compare(_tf32(a) @ _tf32(x), oracle, ref, task.meta.tolerance, extra)
    assert not r.ok, (dist, r.stats)  # inside the old allowance (0.126 per output, normal, K=4099)


@pytest.mark.parametrize("name,shape", [("matmul_square", {"N": 200}),
                                        ("matmul_bias_relu", {"M": 64, "K": 1001, "N": 48}),
                                        ("matmul_batched", {"BATCH": 2, "M": 33, "K": 1001, "N": 17})])
@pytest.mark.parametrize("seed", [0, 1])
def test_honest_gemm_orders_stay_within_the_product_bound(name, shape, seed):
    """mm, addmm (nn.Linear) and bmm: every float32 order passes on every draw of the task."""
    task = resolve_task(name)
    for dist in task.meta.distributions:
        task, inputs, oracle, ref, extra = _judged(name, shape, dist, seed)
        model = task.instantiate(shape, seed)[0].float()
        for how in ("left_to_right", "k_tiles", "lanes", "float64"):
            y = _through(model, inputs, how)
            r = compare(y, oracle, ref, task.meta.tolerance, extra)
            assert r.ok, (name, dist, how, r.stats)


def _through(model: torch.nn.Module, inputs: list, how: str) -> torch.Tensor:
    """``model(*inputs)`` with every matrix product computed in order ``how`` (:func:`_orders`)."""
    from torch.overrides import TorchFunctionMode

    class Products(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in (torch.matmul, torch.Tensor.matmul, torch.bmm, torch.mm) and args[0].dim() >= 2:
                a, b = args[0], args[1]
                if a.dim() == 2 and b.dim() == 2:
                    return _orders(a, b)[how]
                return torch.stack([_orders(x, y)[how] for x, y in zip(a, b)])
            if getattr(func, "__name__", "") == "linear":
                a, w = args[0], args[1]
                bias = args[2] if len(args) > 2 else kwargs.get("bias")
                y = _orders(a.reshape(-1, a.shape[-1]), w.t().contiguous())[how].reshape(*a.shape[:-1], -1)
                return y if bias is None else y + bias
            return func(*args, **kwargs)

    with torch.no_grad(), Products():
        return model(*inputs)


def _short_gemv(tmp_path: Path) -> Path:
    """The suite's gemv with its long-row sweep shape (8191 x 4099) cut to 256 x 4099 and a nominal
    shape of that size: the same rows of 4096 < K < 8192 where the case's candidate reads TF32, without
    the full scope's float64 oracles at 8191 x 4099 and 8192 x 8192 (148 s of a 153 s run here, 93 s
    of CI's 20 minutes for both candidates on the suite's gemv)."""
    text = resolve_task("gemv").path.read_text()
    for old, new in (('{"M": 8191, "K": 4099}', '{"M": 256, "K": 4099}'),
                     ('"nominal": {"M": 8192, "K": 8192}', '"nominal": {"M": 256, "K": 4099}'),
                     ("M = 8192\nK = 8192\n", "M = 256\nK = 4099\n")):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "gemv_long_rows.py"
    path.write_text(text)
    return path


@pytest.mark.slow
@needs_sandbox
def test_rt73_tf32_gemv_on_long_rows_is_incorrect(kstrata_eval, tmp_path):
    wrong = kstrata_eval(str(_short_gemv(tmp_path)), str(CASES / "rt73_gemv_tf32_long_k" / "tf32_long_rows.py"),
                         "--no-time")
    assert (wrong["verdict"], wrong["check"]) == ("incorrect", "tolerance"), _said(wrong)


@pytest.mark.heavy
@needs_sandbox
def test_rt73_an_honest_gemv_in_float32_lanes_is_correct_at_full_scope(kstrata_eval):
    """The honest half of the case, end to end: all 139 full-scope tests of gemv (up to 8191 x 4099
    under the float64 oracle) pass (with the TF32 candidate on the suite's gemv, 93 s of CI's 20
    minutes; :func:`test_rt73_tf32_gemv_on_long_rows_is_incorrect` keeps that one end to end). In CI the same order is judged by the verifier's own
    allowance and comparison at K=4099 on every draw by
    :func:`test_a_tf32_gemv_fails_where_float32_orders_pass` (``lanes`` among its orders), and every
    float32 order of mm, addmm and bmm by :func:`test_honest_gemm_orders_stay_within_the_product_bound`."""
    honest = kstrata_eval("gemv", str(CASES / "rt73_gemv_tf32_long_k" / "lanes_fp32.py"), "--no-time")
    assert honest["verdict"] == "correct", _said(honest)


class _ThreeSums(torch.nn.Module):
    """Three summing ops of which the first and the third feed one output with opposite signs (op indices 0
    and 2: the same index parity)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.sum(-1)
        b = (0.5 * x).sum(-1)
        c = x.flip(-1).sum(-1)
        return a - c + 0.0 * b


def test_three_summing_ops_are_each_seen_with_both_relative_signs():
    """rt70 open item 3: the second sign draw flipped every other op, so ops 0 and 2 kept one relative sign
    in both draws and where the first draw gave them the same sign their moves cancelled: ``a - c`` got no
    allowance (but their ordered-sum bounds' difference) at about half of its elements, and an honest kernel
    summing ``a`` left to right read wrong there."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(64, 4096, generator=g)
    m64 = _ThreeSums()
    with torch.no_grad():
        oracle = m64(x.double())
        extra, _ = reduction_allowance(m64, [x.double()], [oracle], torch.float32, seed=0)
        seq = torch.from_numpy(np.cumsum(x.numpy(), axis=1, dtype=np.float32)[:, -1].copy())
        honest = seq - x.flip(-1).sum(-1)
        r = compare(honest, oracle, m64(x), resolve_task("sum_dim").meta.tolerance, extra[0])
    assert r.ok, r.stats  # before: 'a - c' wrong where the two moves cancelled in both draws


def _conv_judged(shape: dict, dist: str, seed: int) -> tuple:
    """(task, model in float32, x, float64 oracle, float32 reference, allowance) of suite task conv2d at
    ``shape`` (wider than its sweep: case rt73_conv_tf32_wide)."""
    task = resolve_task("conv2d")
    model, inputs, _, _ = task.instantiate(shape, seed)
    x = apply_distribution(inputs, dist, seed)[0]
    m64 = model.double()
    with torch.no_grad():
        oracle = m64(x.double())
        extra, _ = reduction_allowance(m64, [x.double()], [oracle], torch.float32, seed=seed)
        model = model.float()
        return task, model, x, oracle, model(x), extra[0]


@pytest.mark.parametrize("dist", ["normal", "uniform", "near_zero"])
def test_a_tf32_convolution_over_2304_terms_fails(dist):
    """A convolution's allowance was ``12 sqrt(K) u |W||x|`` too (K = C_in * 3 * 3 = 2304): TF32 inputs passed
    the uniform and near_zero draws and failed 6 of 131072 outputs on normal."""
    task, model, x, oracle, ref, extra = _conv_judged(
        {"N": 2, "C_IN": 256, "C_OUT": 64, "H": 34, "W": 34, "KS": 3}, dist, 1)
    with torch.no_grad():
        y = torch.nn.functional.conv2d(_tf32(x), _tf32(model.conv.weight), model.conv.bias)
    r = compare(y, oracle, ref, task.meta.tolerance, extra)
    assert not r.ok and r.stats["wrong"] > 50, (dist, r.stats)


@pytest.mark.parametrize("dist", ["normal", "uniform", "heavy_tailed", "large", "near_zero"])
def test_honest_convolution_orders_stay_within_the_product_bound(dist):
    """im2col then each output summed left to right, in 32-wide k-tiles, in 32 lanes (float32): correct."""
    task, model, x, oracle, ref, extra = _conv_judged(
        {"N": 1, "C_IN": 256, "C_OUT": 8, "H": 18, "W": 18, "KS": 3}, dist, 0)
    w = model.conv.weight.detach().reshape(8, -1)
    cols = torch.nn.functional.unfold(x, 3)[0]  # (K, L)
    for how, y in _orders(w, cols).items():
        y = (y + model.conv.bias.detach()[:, None]).reshape(oracle.shape)
        r = compare(y, oracle, ref, task.meta.tolerance, extra)
        assert r.ok, (dist, how, r.stats)
