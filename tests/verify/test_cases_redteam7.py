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
