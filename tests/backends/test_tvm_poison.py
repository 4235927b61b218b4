"""Poisoned buffers on TVM backends (``Backend.set_poison``): a kernel that reads
memory it never wrote gives pattern-dependent output under patterns 1 and 2.

Case 21 (copied from ../shared/cases/verify): layernorm on tvm-llvm whose
schedule splits the row reduction by 8 and rfactors it over a symbolic D; at
D < 8 the partial-sum lanes k >= D are never initialized, so the verdict used
to depend on what the stack held. Under poison the result is NaN (pattern 1)
or a different wrong value (pattern 2), every time.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
import torch

from kstrata.backends.base import Backend
from kstrata.backends.registry import get_backend
from kstrata.backends.tvm import poison
from kstrata.tasks.loader import resolve_task

CASE = Path(__file__).resolve().parents[1] / "verify" / "cases" / "21_uninitialized_partials_tvm"
SMALL_D = [{"B": 1, "D": 3}, {"B": 3, "D": 7}]


@pytest.fixture(scope="module")
def layernorm():
    return resolve_task("layernorm")


def _case_sources() -> dict[str, str]:
    return {"graph": (CASE / "graph.py").read_text(), "schedule": (CASE / "schedule.py").read_text()}


def _outputs(backend, task, sources, shape, patterns):
    """{pattern: output} of one loaded callable, the reference like the verifier draws it."""
    model, inputs, init_inputs, _ = task.instantiate(shape, 0)
    torch.manual_seed(0)
    fn = backend.load(task, sources, shape, init_inputs)
    out = {}
    for p in patterns:
        backend.set_poison(p)
        out[p] = fn(*inputs).clone()
    backend.set_poison(0)
    with torch.no_grad():
        return out, model(*inputs)


@pytest.mark.parametrize("shape", SMALL_D, ids=lambda s: f"B{s['B']}_D{s['D']}")
def test_uninitialized_rfactor_partials_depend_on_the_pattern(layernorm, shape):
    out, ref = _outputs(get_backend("tvm-llvm"), layernorm, _case_sources(), shape, (1, 2))
    assert not torch.isfinite(out[1]).all()  # NaN read from the never-initialized lanes
    assert torch.isfinite(out[2]).all() and not torch.allclose(out[2], ref, atol=1e-3, rtol=1e-3)
    assert not torch.equal(torch.nan_to_num(out[1]), out[2])


@pytest.mark.parametrize("shape", SMALL_D + [{"B": 5, "D": 77}], ids=lambda s: f"B{s['B']}_D{s['D']}")
def test_correct_schedule_is_unaffected_by_poison(layernorm, shape):
    llvm = get_backend("tvm-llvm")
    out, ref = _outputs(llvm, layernorm, llvm.initial_sources(layernorm), shape, (0, 1, 2))
    for p in (0, 1, 2):
        assert torch.allclose(out[p], ref, atol=1e-4, rtol=1e-4), p
    assert torch.equal(out[1], out[2]) and torch.equal(out[0], out[1])


def test_rfactor_case_is_right_where_every_lane_is_written(layernorm):
    # D = 77 >= 8: every partial lane gets its init, so the poison never shows
    out, ref = _outputs(get_backend("tvm-llvm"), layernorm, _case_sources(), {"B": 5, "D": 77}, (0, 1, 2))
    assert torch.equal(out[0], out[1]) and torch.equal(out[1], out[2])


def test_poison_build_fills_allocations_and_default_build_does_not(layernorm):
    from kstrata.backends.tvm import build as tb

    llvm = get_backend("tvm-llvm")
    _, funcs, _, _ = llvm.scheduled_funcs(layernorm, _case_sources(), layernorm.full_shape(SMALL_D[0]),
                                          symbolic=True)
    plain = tb.generated_source(tb.build_module(funcs, llvm.target()), "llvm")
    poisoned = tb.generated_source(tb.build_module(funcs, llvm.target(), poison=2), "llvm")
    assert "e+30" in poisoned and "e+30" not in plain  # 1e30 stored into the allocations


def test_fill_values_and_bad_pattern():
    assert math.isnan(poison.fill_value("float32", 1)) and poison.fill_value("float32", 2) == 1e30
    assert poison.fill_value("float16", 2) == 65504.0 / 4
    assert poison.fill_value("int32", 1) == 2**31 - 1 and poison.fill_value("int32", 2) == 0x55555555
    assert poison.fill_value("uint8", 1) == 255 and poison.fill_value("int8", 2) == 0x55
    assert poison.fill_value("bool", 1) is True and poison.fill_value("bool", 2) is False
    t = torch.empty(4, dtype=torch.int64)
    poison.fill_tensor(t, 2)
    assert (t == 0x5555555555555555).all()
    with pytest.raises(ValueError):
        get_backend("tvm-llvm").set_poison(3)


def test_base_backend_set_poison_is_a_no_op():
    # pytorch keeps the base's
    backend = get_backend("pytorch")
    assert type(backend).set_poison is Backend.set_poison
    backend.set_poison(1)  # accepted, nothing to do


def test_pattern_zero_costs_nothing_measurable(layernorm):
    """The timed build is TVM's default pipeline (unchanged); what pattern 0 adds
    to a call is one attribute read. Measured against a runner without a switch."""
    from kstrata.backends.tvm.runtime import PlanRunner

    llvm = get_backend("tvm-llvm")
    shape = {"B": 8, "D": 512}
    model, inputs, init_inputs, _ = layernorm.instantiate(shape, 0)
    fn = llvm.load(layernorm, llvm.initial_sources(layernorm), shape, init_inputs)
    bare = PlanRunner(fn.plan, lambda n: fn.kernels[n], fn.params, "cpu")

    def once(f, n=100):
        t0 = time.perf_counter()
        for _ in range(n):
            f(*inputs)
        return (time.perf_counter() - t0) / n

    rounds = [(once(fn), once(bare)) for _ in range(10)]  # interleaved; the minimum of each
    with_switch, without = min(r[0] for r in rounds), min(r[1] for r in rounds)
    assert with_switch < without * 1.25 + 3e-6, (with_switch, without)
