"""Red-team round of 2026-12-04 (rt47...), modelled on public reports of other
kernel evaluators, end to end through ``kstrata eval`` (run in this process
with the session's judge pools: ``conftest.py``); each case folder's
expected.txt says what the candidate does and why it passed before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kstrata import kernels
from kstrata.backends.triton.fidelity import round_f32_to_tf32
from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
SHIPPED_MATMUL = str(Path(kernels.__file__).parent / "triton" / "matmul_square.py")


def summary(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def test_tf32_rounding_keeps_ten_mantissa_bits_to_nearest_even():
    x = np.array([1.0, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-10 + 2**-12, -(1 + 2**-11), np.inf, np.nan],
                 dtype=np.float32)
    got = round_f32_to_tf32(x)
    # a tie goes to the even neighbour (1 + 2^-11 -> 1, 1 + 3*2^-11 -> 1 + 2^-9), else the nearest
    assert got[:5].tolist() == [1.0, 1.0, 1 + 2**-9, 1 + 2**-10, -1.0]
    assert np.isinf(got[5]) and np.isnan(got[6])
    r = np.random.default_rng(0).standard_normal(4096).astype(np.float32)
    rel = np.abs(round_f32_to_tf32(r) - r) / np.abs(r)
    assert rel.max() <= 2.0**-11 and (round_f32_to_tf32(r).view(np.uint32) & 0x1FFF == 0).all()


TF32_CASES = [
    # a plain-TF32 dot read correct on the interpreter, which multiplied in full float32
    ("rt47_tf32_on_the_interpreter/precision_through_a_constexpr.py", "incorrect", None),
    ("rt47_tf32_on_the_interpreter/input_precision_none.py", "rejected", "no_precision_downgrade"),
    (SHIPPED_MATMUL, "correct", None),  # tf32x3: three TF32 products, float32 accuracy
]


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("candidate,verdict,check", TF32_CASES)
def test_rt47_a_tf32_dot_is_judged_on_the_interpreter_as_the_gpu_computes_it(kstrata_eval, candidate, verdict, check):
    d = kstrata_eval("matmul_square", candidate, "--no-time", "--scope", "small", backend="triton-interp")
    assert d["verdict"] == verdict, summary(d)
    if check:
        assert d["check"] == check, summary(d)


RACE_CASES = [
    # the interpreter ran a launch's programs one by one in grid order: no two ever overlapped
    ("split_sum_plain_read_modify_write.py", "runtime_error", "plain read-modify-write"),
    ("split_sum_first_program_stores.py", "runtime_error", "a plain store and an atomic update"),
    ("split_sum_read_modify_write_beside_an_atomic.py", "runtime_error", "plain read-modify-write"),
    ("split_sum_last_program_adds_partials.py", "correct", None),  # reads ordered through an atomic counter
    ("split_sum_under_a_lock.py", "correct", None),  # read-modify-writes ordered by atomic_cas/atomic_xchg
]


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("candidate,verdict,words", RACE_CASES)
def test_rt47_programs_of_one_launch_that_race_fail_on_the_interpreter(kstrata_eval, candidate, verdict, words):
    d = kstrata_eval("sum_dim", f"rt47_races_the_interpreter_serialises/{candidate}", "--no-time", "--scope", "small",
                     backend="triton-interp")
    assert d["verdict"] == verdict, summary(d)
    if words:
        message = d["evidence"]["message"]
        assert "DataRace" in message and "kernel _partial" in message and words in message, summary(d)


TILELANG_RACE_CASES = [
    # tilelang-c runs a kernel's blocks one after another in a C loop: a plain read-modify-write passed
    ("tilelang_split_sum_plain_read_modify_write.py", "compile_error"),
    ("tilelang_split_sum_under_a_condition_that_always_holds.py", "compile_error"),
    ("tilelang_split_sum_through_a_local_index.py", "compile_error"),
    ("tilelang_split_sum_atomic.py", "correct"),
]


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("candidate,verdict", TILELANG_RACE_CASES)
def test_rt47_tilelang_blocks_that_store_to_one_element_fail(kstrata_eval, candidate, verdict):
    from kstrata.backends.registry import get_backend

    if not get_backend("tilelang-c").availability().usable:
        pytest.skip("tilelang-c is not usable here (kstrata setup)")
    d = kstrata_eval("sum_dim", f"rt47_races_the_interpreter_serialises/{candidate}", "--no-time", "--scope", "small",
                     backend="tilelang-c")
    assert d["verdict"] == verdict, summary(d)
    if verdict == "compile_error":
        # the details are withheld when the candidate's own kernel cache (from an earlier run) was used
        message = d["evidence"]["message"]
        assert ("BlockRace" in message and "bx (extent" in message) or "withheld" in message, summary(d)
