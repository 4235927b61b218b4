"""Red-team variants of the verifier cases (written this round from the known
kinds; each folder's expected.txt says what was done and why it might have
passed), end to end through ``kstrata eval`` (run in this process with the
session's judge pools: ``conftest.py``)."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not status().usable, reason="no sandbox here")]


def summary(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def test_rt34_nansum_over_unwritten_memory_is_incorrect(kstrata_eval):
    d = kstrata_eval("sum_dim", "rt34_nan_masked_uninitialized_pad/candidate.py", "--no-time")
    assert d["verdict"] == "incorrect", summary(d)


def test_rt35_wrong_where_the_reference_is_right_is_incorrect(kstrata_eval):
    d = kstrata_eval("rt35_in_domain_rows_dropped/task.py", "rt35_in_domain_rows_dropped/candidate.py", "--no-time")
    assert d["verdict"] == "incorrect", summary(d)


def test_rt36_tail_bug_at_d_2_mod_4_is_incorrect_for_every_secret(kstrata_eval):
    for _ in range(2):  # each eval draws a new secret
        d = kstrata_eval("softmax", "rt36_perturbation_residue_bug/candidate.py", "--no-time")
        assert d["verdict"] == "incorrect", summary(d)


def test_rt37_skipped_tail_at_scale_is_incorrect(kstrata_eval):
    d = kstrata_eval("rt37_grid_cap_tail_at_scale/task.py", "rt37_grid_cap_tail_at_scale/candidate.py", "--no-time")
    assert d["verdict"] == "incorrect", summary(d)


def test_rt39_output_buffer_kept_across_timed_calls_is_rejected(kstrata_eval):
    # timed at 256 x 4096, not the nominal 4096 x 4096 (2.5 minutes under load): the check compares
    # the storage of each timed call's output with the previous one's, whatever their size
    d = kstrata_eval("relu", "rt39_persistent_output_buffer/candidate.py", "--timing-shape", "B=256,D=4096")
    # since c6edfe2 the checked calls of the verification catch it first (check output_reused there)
    said = f"{d.get('check')} {d['evidence'].get('message')}"
    assert d["verdict"] == "rejected" and "output_reused" in said, summary(d)


def test_rt26_memo_on_address_and_version_gains_nothing(kstrata_eval):
    d = kstrata_eval("11_value_keyed_memo/task.py", "rt26_address_version_memo/candidate.py")
    t = d.get("timing") or {}
    assert d["verdict"] in ("correct", "rejected"), summary(d)
    if d["verdict"] == "correct":  # the memo never hits: it does the product plus a clone
        assert t.get("speedup_ci") and t["speedup_ci"][0] <= 1.0, (t, summary(d))


def test_rt26_memo_on_addresses_returns_stale_outputs_and_is_rejected(kstrata_eval):
    d = kstrata_eval("11_value_keyed_memo/task.py", "rt26_address_version_memo/candidate_address_only.py")
    # the verifier's own caching probe (new values at the same address) or a checked timed call
    assert d["verdict"] == "rejected" and d.get("check") in ("no_caching", "timed_output"), summary(d)


def test_rt26_memo_on_a_value_fingerprint_gains_nothing(kstrata_eval):
    d = kstrata_eval("11_value_keyed_memo/task.py", "rt26_address_version_memo/candidate_fingerprint.py")
    t = d.get("timing") or {}
    # every element of a reused copy changes (kstrata.measure.freshen), the fingerprint too: the memo
    # misses on every timed call (correct, no gain); a stale hit would be a checked timed call's rejection.
    # The "ties" draw's constant rows give two different inputs the same fingerprint (the first values of A,
    # the last of B): the memo serves a stale product there, incorrect
    assert d["verdict"] in ("correct", "rejected", "incorrect"), summary(d)
    if d["verdict"] == "rejected":
        # a stale hit in a checked timed call, or the hidden in-place change of a few interior elements
        # (6ff7c76), which leaves a fingerprint of the first/last values as it was
        assert d.get("check") in ("timed_output", "no_caching"), summary(d)
    elif d["verdict"] == "correct":
        assert t.get("speedup_ci") and t["speedup_ci"][0] <= 1.0, (t, summary(d))


def test_rt40_gemm_that_recomputes_only_what_the_timer_changed_gains_nothing(kstrata_eval):
    d = kstrata_eval("matmul_square", "rt40_incremental_gemm_memo/candidate.py", "--timing-shape", "N=512")
    t = d.get("timing") or {}
    assert d["verdict"] in ("correct", "rejected"), summary(d)
    if d["verdict"] == "correct":  # every row changed: a full product plus the comparisons
        assert t.get("speedup_ci") and t["speedup_ci"][0] <= 1.0, (t, summary(d))


OFFSET_CASES = [
    # red-team 2026-12-04: one-pass variance E[x^2] - E[x]^2 (cancels at |mean| >> std) and a softmax tile
    # padded with -100 whose padded lanes stay in the sum (wrong only when real values are far below zero);
    # both passed every default distribution until "offset" (+-1000 by row)
    ("layernorm", "rt41_offset_exposed/layernorm_one_pass.py", "pytorch"),
    ("softmax", "rt41_offset_exposed/softmax_triton_pad_minus_100.py", "triton-interp"),
]


@pytest.mark.parametrize("task,candidate,backend", OFFSET_CASES)
def test_rt41_bugs_that_only_large_offsets_expose_are_incorrect(kstrata_eval, task, candidate, backend):
    d = kstrata_eval(task, candidate, "--no-time", backend=backend)
    assert d["verdict"] == "incorrect", summary(d)


def test_a_small_scope_pass_names_the_sweep_shapes_it_left_out(kstrata_eval):
    # newcomer nc11: a softmax that truncated rows over 4096 read a plain "correct" at --scope small
    d = kstrata_eval("relu", "rt41_offset_exposed/relu_ok.py", "--no-time", "--scope", "small")
    assert d["verdict"] == "correct", summary(d)
    scope = d["evidence"].get("scope", "")
    assert "sweep shapes were not tested" in scope and "--scope full" in scope, d["evidence"]


DRAW_CASES = [
    # red-team 2026-12-04: wrong only where a row (a whole reduction) is constant; no draw had such rows
    # until "ties"
    ("softmax", "rt42_constant_rows/softmax_zeros_on_constant_rows.py"),
    ("log_softmax", "rt42_constant_rows/log_softmax_zeros_on_constant_rows.py"),
    ("sum_dim", "rt42_constant_rows/sum_dim_zero_on_constant_rows.py"),
    # red-team 2026-12-04: a clamp after a narrowing cast, wrong only for |x / s| far outside int8; no
    # quantization task drew such values until "outliers"
    ("quantize_per_tensor", "rt43_quantize_saturation/int16_cast_before_clamp.py"),
    ("quantize_per_channel", "rt43_quantize_saturation/per_channel_int16_cast_before_clamp.py"),
]


@pytest.mark.parametrize("task,candidate", DRAW_CASES)
def test_rt42_rt43_bugs_only_the_ties_or_outliers_draw_exposes_are_incorrect(kstrata_eval, task, candidate):
    d = kstrata_eval(task, candidate, "--no-time", "--scope", "small")
    assert d["verdict"] == "incorrect", summary(d)


ROUNDING_CASES = [
    # red-team 2026-12-04: the quant policy allows integer outputs one step at a rounding tie, nothing more
    ("rt44_quantize_rounding_ties/reciprocal.py", "correct"),
    ("rt44_quantize_rounding_ties/half_away_from_zero.py", "correct"),
    ("rt44_quantize_rounding_ties/off_by_one_near_ties.py", "incorrect"),
]


@pytest.mark.parametrize("candidate,verdict", ROUNDING_CASES)
def test_rt44_quantize_one_step_at_rounding_ties_only(kstrata_eval, candidate, verdict):
    d = kstrata_eval("rt44_quantize_rounding_ties/task.py", candidate, "--no-time")
    assert d["verdict"] == verdict, summary(d)
    assert "within rounding" in d["tolerance"]["integer_outputs"], d["tolerance"]
    if verdict == "incorrect":
        assert d["evidence"]["stats"]["policy"] == "quant" and d["evidence"]["stats"]["integer"], d["evidence"]


LAYOUT_CASES = [
    # red-team 2026-12-04: output strides were not checked; a view left for the caller to copy passed
    ("transpose", "rt45_output_layout/transpose_copy_then_t.py", "rejected"),
    ("softmax", "rt45_output_layout/softmax_column_major.py", "rejected"),
    ("relu", "rt45_output_layout/relu_padded_rows.py", "rejected"),
    ("transpose", "rt45_output_layout/transpose_contiguous.py", "correct"),
]


@pytest.mark.parametrize("task,candidate,verdict", LAYOUT_CASES)
def test_rt45_an_output_in_another_layout_than_the_reference_is_rejected(kstrata_eval, task, candidate, verdict):
    d = kstrata_eval(task, candidate, "--no-time", "--scope", "small")
    assert d["verdict"] == verdict, summary(d)
    if verdict == "rejected":
        assert d["check"] == "output_layout", summary(d)
        assert "strides" in d["evidence"]["message"] and "layout" in d["evidence"]["message"], summary(d)


STATE_CASES = [
    # red-team 2026-12-04: right on its first calls only, it was told of a boundary / shape-specific bug
    ("rt46_state_across_calls/right_on_first_test_only.py", "call_history", "kept between calls"),
    ("rt46_state_across_calls/right_on_first_call_only.py", "race", "kept between calls"),
]


@pytest.mark.parametrize("candidate,kind,words", STATE_CASES)
def test_rt46_state_kept_across_calls_is_named_as_such_not_as_a_shape_bug(kstrata_eval, candidate, kind, words):
    d = kstrata_eval("softmax", candidate, "--no-time", "--scope", "small")
    assert d["verdict"] == "incorrect", summary(d)
    items = {i["kind"]: i for i in d["feedback"]}
    assert kind in items and words in items[kind]["text"], d["feedback"]
    assert "shapes" not in items and not any("shape-specific" in i["text"] for i in d["feedback"]), d["feedback"]


def test_rt42_a_reduction_s_wrong_outputs_are_named_by_the_output_s_dims(kstrata_eval):
    # red-team 2026-12-04: a row sum's wrong output index (output (B, 1)) was called a "column"
    d = kstrata_eval("sum_dim", "rt42_constant_rows/sum_dim_zero_on_constant_rows.py", "--no-time", "--scope", "small")
    where = next(i for i in d["feedback"] if i["kind"] == "rows_cols")
    assert "column" not in where["text"] and "dim 0 (size 8): 0, 4" in where["text"], where
