"""Red-team round rt67 (2026-12-05): candidates the verifier judged wrongly, as regression tests.

Case folders ``cases/rt67_*``; every attempt of the round and its verdict is in
``benchmarks/results/redteam_rt67_verify.txt``.

* A GEMM on fewer bits than its quantization contract: w8a8_gemm (exact integer accumulation, float32 output)
  computed on int6 activations (the two low bits of every int8 dropped, as an int4/int6 tensor-core path would)
  read correct: every output ~2% off passed the task's quant limits (cosine 0.95, rel_l1 0.05, RMSE 0.10), which
  stand for re-quantization at rounding ties and for half-precision accumulation. So did (in-process) one that
  never summed the K % 16 tail of a row of 2051 (rel_l1 ~0.03).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kstrata.sandbox import status
from kstrata.tasks.meta import Tolerance
from kstrata.verify.tolerance import compare

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASES = Path(__file__).resolve().parent / "cases"
QUANT = Tolerance(kind="quant", cosine=0.95, rel_l1=0.05, rmse=0.10)


def _said(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def _w8a8(m: int = 48, k: int = 512, n: int = 40, bits_dropped: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(candidate float32, float64 oracle) of an int8 GEMM with per-row and per-column scales."""
    g = torch.Generator().manual_seed(3)
    xq = torch.randint(-127, 128, (m, k), generator=g, dtype=torch.int64)
    wq = torch.randint(-127, 128, (n, k), generator=g, dtype=torch.int64)
    sx, sw = torch.rand(m, 1, generator=g, dtype=torch.float64) / 100, torch.rand(n, generator=g, dtype=torch.float64) / 100
    oracle = (xq @ wq.t()).double() * sx * sw
    step = 1 << bits_dropped
    xc = torch.div(xq, step, rounding_mode="floor") * step + step // 2 if bits_dropped else xq
    return ((xc @ wq.t()).double() * sx * sw).float(), oracle


def test_a_float32_quant_output_off_everywhere_by_a_few_percent_fails():
    cand, oracle = _w8a8(bits_dropped=2)
    r = compare(cand, oracle, oracle.float(), QUANT)
    assert r.stats["rel_l1"] < QUANT.rel_l1 and r.stats["cosine"] > QUANT.cosine  # inside the aggregate limits
    assert not r.ok, r.stats
    honest, oracle = _w8a8()
    assert compare(honest, oracle, oracle.float(), QUANT).ok


def test_the_shortcut_on_a_share_of_the_output_fails_too():
    cand, oracle = _w8a8(bits_dropped=2)
    exact, _ = _w8a8()
    cand[: cand.shape[0] * 3 // 4] = exact[: cand.shape[0] * 3 // 4]  # int6 on a quarter of the rows only
    r = compare(cand, oracle, oracle.float(), QUANT)
    assert not r.ok and r.stats["rel_l1"] < QUANT.rel_l1, r.stats


def test_a_quant_gemm_that_drops_the_tail_of_k_fails():
    g = torch.Generator().manual_seed(5)
    xq, wq = torch.randint(-127, 128, (32, 2051), generator=g), torch.randint(-127, 128, (24, 2051), generator=g)
    oracle = (xq @ wq.t()).double() / 1e4
    cand = ((xq[:, :2048] @ wq[:, :2048].t()).double() / 1e4).float()  # K % 16 == 3 elements never summed
    r = compare(cand, oracle, oracle.float(), QUANT)
    assert r.stats["rel_l1"] < QUANT.rel_l1 and not r.ok, r.stats


def test_a_half_precision_quant_output_keeps_its_aggregate_limits():
    cand, oracle = _w8a8(bits_dropped=2)  # the same errors in a float16 output: what fp16 accumulation may do
    assert compare(cand.half(), oracle, oracle.half(), QUANT).ok


def test_a_few_steps_at_ties_still_pass_in_a_float32_quant_output():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 256, generator=g, dtype=torch.float64)
    scale = x.abs().amax(dim=1, keepdim=True) / 127
    oracle = (x / scale).round().clamp(-127, 127) * scale
    cand = oracle.clone()
    cand[5, 7] += scale[5, 0]  # one tie rounded the other way
    cand[40, 100] -= scale[40, 0]
    assert compare(cand.float(), oracle, oracle.float(), Tolerance(kind="quant", cosine=0.999, rel_l1=0.01,
                                                                   rmse=0.02)).ok


@pytest.mark.slow
@needs_sandbox
def test_rt67_w8a8_on_int6_activations_is_incorrect(kstrata_eval):
    case = CASES / "rt67_w8a8_fewer_bits"
    d = kstrata_eval("w8a8_gemm", str(case / "int6_activations.py"), "--scope", "small", "--no-time")
    assert d["verdict"] == "incorrect" and d["check"] == "tolerance", _said(d)
    d = kstrata_eval("w8a8_gemm", str(case / "honest_exact.py"), "--scope", "small", "--no-time")
    assert d["verdict"] == "correct", _said(d)



class _Test:
    def describe(self) -> str:
        return "a public test"


def test_the_message_says_the_typical_element_is_off():
    from kstrata.verify.runner import Failure, _incorrect

    cand, oracle = _w8a8(bits_dropped=2)
    r = compare(cand, oracle, oracle.float(), QUANT)
    stop = _incorrect(Failure(test=_Test(), outputs=[], oracles=[], comparisons=[r]), True)
    assert "one in ten elements" in str(stop) and "fewer bits" in str(stop), stop


def test_a_fake_quant_step_at_a_rounding_tie_passes_either_way():
    from kstrata.verify.rounding import nearest_side, rounding_sides

    def fake_quant(x: torch.Tensor) -> torch.Tensor:
        scale = x.abs().amax(dim=-1, keepdim=True) / 127
        return torch.round(x / scale).clamp(-127, 127) * scale

    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 256, generator=g)
    x[1, 0], x[1, 1] = 45.39824676513672, 0.5361997485160828  # the row's amax; x / s = 1.49999995
    ref, oracle = fake_quant(x), fake_quant(x.double())
    cand = torch.round(x * (127.0 / x.abs().amax(-1, keepdim=True))).clamp(-127, 127) \
        * (x.abs().amax(-1, keepdim=True) * (1.0 / 127))
    tol = Tolerance(kind="quant", cosine=0.999, rel_l1=0.01, rmse=0.02)
    assert not compare(cand, oracle, ref, tol).ok  # one step past the elementwise cap
    down, up, _ = rounding_sides(lambda: [fake_quant(x.double())], torch.float32)
    eff, ref_moved, moved = nearest_side(cand, oracle, ref, down[0], up[0])
    assert moved >= 1 and compare(cand, eff, ref_moved, tol).ok
    wrong = cand.clone()
    wrong[1, 5] += float(x[1].abs().max() / 127)  # the same step where no tie is: still wrong
    eff, ref_moved, _ = nearest_side(wrong, oracle, ref, down[0], up[0])
    assert not compare(wrong, eff, ref_moved, tol).ok


@pytest.mark.slow
@needs_sandbox
def test_rt67_an_honest_fake_quant_at_a_tie_is_correct(kstrata_eval):
    case = CASES / "rt67_fake_quant_tie_float"
    d = kstrata_eval(str(case / "task_tie_row.py"), str(case / "reciprocal.py"), "--scope", "small", "--no-time")
    assert d["verdict"] == "correct", _said(d)
