"""Red-team round rt87 (2026-12-06): the verifier's shape plan and quant numerics.

* A per-token fake quantization whose last partial 16-row tile shared one scale only where T >= 1024 read
  correct for every secret: no test had a large T that is no multiple of 16 (rt80 open item; case
  ``cases/rt87_scale_tail``, the suite task with a nominal T of 2048). The largest verified shape now gets a
  scale-tail probe, its sizes moved onto odd values (:mod:`kstrata.verify.scale_tails`).
* Case 02's partial mean at scale (the first 48M of 50.3M squared differences) with the task's draws listed
  as ``normal`` and ``uniform``: the large shape ran those two only, where a mean of 95% of the elements is
  as near as a reordered sum (1.6e-5 and 1.1e-5 relative at 6144 x 8192, inside the bound; caught or not by
  the seeds' luck; case ``cases/rt87_partial_mean_listed_draws``, no end-to-end test: 50M elements need
  memory CI lacks). A large shape's second draw is now the heavy-tailed one, listed or not
  (:func:`kstrata.verify.plan.large_draws`).
* A W4A16 GEMM with int8 per-token activations only where K >= 400 errs about as much as honest float16
  accumulation there (rt80 open item 1; case ``cases/rt87_w4a8_long_k``). The judge now compares a passing
  output with the float64 reference on inputs rounded to coarser grids (:mod:`kstrata.verify.input_grids`).

Log: ``benchmarks/results/redteam_rt87_verify.txt``.
"""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest
import torch

from kstrata.sandbox import status
from kstrata.tasks.inputs import apply_distribution
from kstrata.tasks.loader import load_task, resolve_task
from kstrata.verify.input_grids import GRID_RATIO, coarser_grid
from kstrata.verify.plan import LARGE_SECOND_DRAW, hidden_tests, nominal_tests, size_bounds
from kstrata.verify.runner import _scale_tail_tests, flatten
from kstrata.verify.scale_tails import tail_shape

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASES = Path(__file__).resolve().parent / "cases"
TAIL = CASES / "rt87_scale_tail"
PARTIAL = CASES / "rt87_partial_mean_listed_draws"
W4A8 = CASES / "rt87_w4a8_long_k"


def _said(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def _module(path: Path):  # the test's own process: candidate files of this repository's cases
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("secret", ["a", "b", "c", "d"])
def test_the_largest_verified_shape_gets_a_probe_with_partial_tiles(secret):
    """fake_quant_per_token's nominal T (a multiple of 16) moves onto an odd T (a partial tile of every
    power-of-two width), D too, inside the bounds an agent is told; the probe is a function of the secret."""
    task = load_task(TAIL / "task.py")
    run = [*task.sweep_shapes, task.nominal_shape]
    tests = _scale_tail_tests(task, secret, run)
    assert tests and len({t.shape for t in tests}) == 1 and not any(t.public for t in tests)
    shape = tests[0].shape_dict
    assert shape["T"] % 2 and shape["D"] % 2 and abs(shape["T"] - 2048) <= 7 and abs(shape["D"] - 512) <= 7
    bounds = size_bounds(task)
    assert all(bounds[n][0] <= v <= bounds[n][1] for n, v in shape.items()), (shape, bounds)
    assert _scale_tail_tests(task, secret, run) == tests


def test_a_size_the_task_never_takes_odd_keeps_its_value():
    """w4a16_gemm's K (a multiple of the 128 quantization group in every listed shape) is not moved."""
    task = resolve_task("w4a16_gemm")
    moved = tail_shape(task, "a", {"M": 4096, "K": 4096, "N": 4096})
    assert moved is not None and moved["K"] == 4096 and moved["M"] % 2 and moved["N"] % 2


def test_a_large_shape_gets_the_heavy_tailed_draw_whatever_the_task_lists():
    """The task lists normal and uniform (its category adds one-signed and far draws): its large sweep shape
    and its nominal shape still run the heavy-tailed draw, two seeds each."""
    task = load_task(PARTIAL / "task.py")
    assert LARGE_SECOND_DRAW not in task.meta.distributions
    large = [t for t in hidden_tests(task, "s1") if t.shape_dict == {"batch_size": 6144, "dim": 8192}]
    assert {t.dist for t in large} == {"normal", LARGE_SECOND_DRAW} and len({t.seed for t in large}) == 2
    nominal, _ = nominal_tests(task, "s1")
    assert {t.dist for t in nominal} == {"normal", LARGE_SECOND_DRAW}


@pytest.mark.parametrize("dist", ["normal", "uniform", "heavy_tailed"])
def test_a_mean_of_most_elements_is_caught_only_by_the_heavy_tailed_draw(dist):
    """The mean of the first 95.4% of 8M squared differences (case 02's coverage) is within the tolerance on
    the normal and uniform draws (as near as a reordered sum) and far outside it on the heavy-tailed one,
    whose extremes sit at the tensors' ends."""
    from kstrata.verify.tolerance import compare

    task = load_task(PARTIAL / "task.py")
    model, inputs, _, _ = task.instantiate({"batch_size": 1024, "dim": 8192}, 0)
    p, t = apply_distribution(inputs, dist, 1)
    oracle = ((p.double() - t.double()) ** 2).mean().reshape(())
    k = int(p.numel() * 0.954)
    d = p.reshape(-1)[:k] - t.reshape(-1)[:k]
    res = compare((d * d).mean().reshape(()), oracle, model(p, t), task.meta.tolerance)
    assert res.ok == (dist != "heavy_tailed"), res.stats


def _w4a16(shape: dict, dist: str) -> tuple:
    task = resolve_task("w4a16_gemm")
    model, inputs, init, _ = task.instantiate(shape, 0)
    xs = apply_distribution(inputs, dist, 1, task.meta.dist_inputs)
    m64 = copy.deepcopy(model).double()

    def forward64(ys):
        with torch.no_grad():
            return flatten(m64(*[y.double() if y.is_floating_point() else y for y in ys]))

    return model, init, xs, forward64, forward64(xs)


def _candidate(path: Path, model, init) -> torch.nn.Module:
    cand = _module(path).ModelNew(*init)
    cand.load_state_dict(model.state_dict())
    return cand


@pytest.mark.parametrize("dist", ["normal", "uniform"])
@pytest.mark.parametrize("shape", [{"M": 16, "K": 512, "N": 64}, {"M": 33, "K": 1152, "N": 17}])
def test_int8_activations_follow_their_grid_and_float16_accumulation_does_not(shape, dist):
    """The W4A8 output is far nearer the float64 reference on int8 per-token inputs than the exact one
    (ratio <= 0.1); honest float16 accumulation and the float16 reference itself are not (>= 1 measured)."""
    model, init, xs, forward64, oracle = _w4a16(shape, dist)
    with torch.no_grad():
        wrong = flatten(_candidate(W4A8 / "int8_past_k400.py", model, init)(*xs))
        honest = flatten(_candidate(CASES / "rt80_w4a16_fp16_accumulation" / "fp16_left_to_right.py",
                                    model, init)(*xs))
        native = flatten(model(*xs))
    found = coarser_grid(forward64, xs, wrong, oracle, True)
    assert found is not None and "int8 with a per-row absmax scale" in found[0], found
    assert found[1]["ratio"] < 0.1, found
    for out in (honest, native):
        assert coarser_grid(forward64, xs, out, oracle, True) is None


def test_an_exact_or_tiny_output_decides_nothing():
    """Outputs equal to the oracle, or under 64 elements, never follow a grid."""
    model, init, xs, forward64, oracle = _w4a16({"M": 1, "K": 512, "N": 3}, "normal")
    with torch.no_grad():
        wrong = flatten(_candidate(W4A8 / "int8_past_k400.py", model, init)(*xs))
    assert coarser_grid(forward64, xs, wrong, oracle, True) is None
    model, init, xs, forward64, oracle = _w4a16({"M": 16, "K": 512, "N": 64}, "normal")
    assert coarser_grid(forward64, xs, [o.half() for o in oracle], oracle, True) is None
    assert GRID_RATIO <= 0.5


@pytest.mark.slow
@needs_sandbox
def test_w4a8_past_k400_is_incorrect_end_to_end(kstrata_eval):
    """Read correct before (rt80's open item 1: every test with K >= 400 inside the quant tolerance); now the
    first hidden shape with K >= 400 fails (every secret: the sweep has K = 1024 and 1152), the message
    (shown with --show-hidden) naming the int8 grid."""
    d = kstrata_eval("w4a16_gemm", str(W4A8 / "int8_past_k400.py"), "--no-time", "--show-hidden")
    assert (d["verdict"], d["check"]) == ("incorrect", "tolerance"), _said(d)
    assert "int8 with a per-row absmax scale" in str(d["evidence"]), _said(d)


@pytest.mark.slow
@needs_sandbox
def test_a_partial_tile_at_scale_is_incorrect_end_to_end(kstrata_eval):
    """The rt80 candidate on the suite task's contract at a nominal T of 2048: correct before (no large T
    off a multiple of 16), incorrect now; the honest x * (1/scale) stays correct."""
    d = kstrata_eval(str(TAIL / "task.py"), str(CASES / "rt80_quant_tail_share" / "tail_tile_at_scale.py"),
                     "--no-time", "--secret", "rt87s1")
    assert d["verdict"] == "incorrect", _said(d)
    honest = kstrata_eval(str(TAIL / "task.py"), str(CASES / "rt80_quant_tail_share" / "reciprocal_scale.py"),
                          "--no-time", "--secret", "rt87s1")
    assert honest["verdict"] == "correct", _said(honest)
