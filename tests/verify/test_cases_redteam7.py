"""Red-team round of 2026-12-04, second part (rt48...), end to end through
``kstrata eval`` (run in this process with the session's judge pools:
``conftest.py``); each case folder's expected.txt says what the candidate
does and why it passed before."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")


def summary(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


INTERP_CASES = [
    # the last chunk's program adds partials the others stored, behind a counter whose value nothing reads
    ("split_sum_decoy_counter.py", "incorrect", None),
    # an unmasked load past the end of x whose lanes are dropped by tl.where afterwards
    ("row_sum_unmasked_load.py", "runtime_error", "OutOfBounds"),
    ("row_sum_masked_load.py", "correct", None),
    # honest: float atomics add the partials in whichever order the programs run (both orders pass)
    ("split_sum_float_atomics.py", "correct", None),
]


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("candidate,verdict,words", INTERP_CASES)
def test_rt48_program_order_and_bounds_on_the_interpreter(kstrata_eval, candidate, verdict, words):
    d = kstrata_eval("sum_dim", f"rt48_interpreter_order_and_bounds/{candidate}", "--no-time", "--scope", "small",
                     backend="triton-interp")
    assert d["verdict"] == verdict, summary(d)
    if words:
        assert d.get("check") == words or words in str(d["evidence"].get("message")), summary(d)


SIGN_CASES = [
    # a minimum started at 0.0: right whenever the draw holds a negative value
    ("minmax_scale_min_starts_at_zero.py", "incorrect"),
    # a maximum started at 0.0: right whenever the draw holds a positive value
    ("minmax_scale_max_starts_at_zero.py", "incorrect"),
]


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("candidate,verdict", SIGN_CASES)
def test_rt48_a_reduction_started_at_zero_meets_a_one_signed_draw(kstrata_eval, candidate, verdict):
    d = kstrata_eval("rt48_one_signed_draws/task_minmax_scale.py", f"rt48_one_signed_draws/{candidate}", "--no-time",
                     "--scope", "small")
    assert d["verdict"] == verdict, summary(d)


READS, BOUNDS = "rt48_tilelang_reads_another_block", "rt48_tilelang_out_of_bounds"
TILELANG_CASES = [
    # the last chunk's block adds the partials the other blocks stored (tilelang-c runs them first)
    (READS, "split_sum_last_block_adds_partials.py", "BlockRace"),
    # block b reads the running total block b - 1 stored
    (READS, "row_sum_through_the_previous_block.py", "BlockRace"),
    # the same as the first behind a guard that reads a zero flag nothing updates (read as "ordered" before)
    (READS, "split_sum_last_block_behind_a_flag.py", "BlockRace"),
    # the same as the first through an index table in memory (an index read from memory was not judged)
    (READS, "split_sum_last_block_through_an_index.py", "BlockRace"),
    # the same as the first under `c == nc - 1 and ticket >= 0`: a ticket that decides nothing
    (READS, "split_sum_last_block_behind_a_ticket_that_decides_nothing.py", "BlockRace"),
    # the same under a plain load of a flag a no-op atomic "updates"
    (READS, "split_sum_last_block_behind_an_atomic_flag.py", "BlockRace"),
    # honest: a block reads back only the elements it stored itself
    (READS, "row_sum_two_passes_over_its_own_output.py", None),
    # honest: the block that takes the row counter's last ticket (an atomic's result) adds the partials
    (READS, "split_sum_last_block_by_ticket.py", None),
    # each element loaded before its bounds test: the last chunk's loads run past the row
    (BOUNDS, "row_sum_load_before_the_guard.py", "OutOfBounds"),
    (BOUNDS, "row_sum_load_under_the_guard.py", None),
    (BOUNDS, "row_sum_load_in_a_select.py", None),
]


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("folder,candidate,error", TILELANG_CASES)
def test_rt48_a_tilelang_block_reading_another_blocks_store_or_past_an_axis_fails(kstrata_eval, folder, candidate,
                                                                                   error):
    from kstrata.backends.registry import get_backend

    if not get_backend("tilelang-c").availability().usable:
        pytest.skip("tilelang-c is not usable here (kstrata setup)")
    d = kstrata_eval("sum_dim", f"{folder}/{candidate}", "--no-time", "--scope", "small", backend="tilelang-c")
    assert d["verdict"] == ("compile_error" if error else "correct"), summary(d)
    if error:
        # the details are withheld when the candidate's own kernel cache (from an earlier run) was used
        message = d["evidence"]["message"]
        assert error in message or "withheld" in message, summary(d)


@needs_sandbox
def test_rt48_a_candidate_wrong_only_at_a_batch_of_one_is_not_correct(kstrata_eval):
    d = kstrata_eval("sum_dim", "rt48_size_one/sum_dim_squeeze.py", "--no-time", "--scope", "small")
    assert d["verdict"] in ("rejected", "incorrect"), summary(d)


def test_rt48_every_size_is_probed_at_one_and_the_prompt_range_says_so():
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.plan import screening_shapes, size_bounds, unit_tests

    task = resolve_task("sum_dim")
    probes = [t.shape_dict for t in unit_tests(task, "s", screening_shapes(task))]
    assert {"B": 1, "D": 2} in probes and {"B": 3, "D": 1} in probes and all(not t.public for t in
                                                                             unit_tests(task, "s", task.sweep_shapes))
    assert size_bounds(task)["B"][0] == 1 and size_bounds(task)["D"][0] == 1
    conv = resolve_task("conv2d")  # a kernel width (never above 8) keeps its sizes
    assert all(t.shape_dict["KS"] in (3, 5) for t in unit_tests(conv, "s", conv.sweep_shapes))
    assert size_bounds(conv)["KS"][0] == 3


def test_rt48_the_positive_draw_is_the_normal_draw_made_at_least_one():
    import torch

    from kstrata.tasks.inputs import apply_distribution
    from kstrata.tasks.meta import DEFAULT_DISTRIBUTIONS, TaskMeta

    x = torch.randn(33, 65)
    [y, n] = apply_distribution([x, torch.arange(4)], "positive", 5)
    assert y.dtype == x.dtype and y.shape == x.shape and torch.equal(y, (x.double().abs() + 1).float())
    assert bool((y >= 1).all()) and torch.equal(n, torch.arange(4))  # integers are never changed
    assert "positive" in DEFAULT_DISTRIBUTIONS and "shifted" in DEFAULT_DISTRIBUTIONS
    quant = TaskMeta(category="quant", distributions=("normal",))
    assert {"positive", "shifted"} <= set(quant.distributions)

