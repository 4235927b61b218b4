"""Queue round rt82: the verifier's located feedback names what the model lacked (case folder
``cases/rt82_feedback``; unit tests of the same hints: tests/agents/test_rt82_feedback_hints.py).

- rmsnorm_padded_count: sqrt(80/77), rt78's open item, is named as a size ratio;
- ce_max_from_zero: an ``offset`` failure says the wrong rows are the ones moved down (rt78's open item);
- swiglu_w3_first: the output is the reference's with ``w1`` and ``w3`` exchanged (rt82's own swiglu answer).
"""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASE = "rt82_feedback"


def _said(d: dict, kind: str) -> str:
    assert d["verdict"] == "incorrect", d
    return " ".join(i["text"] for i in d["feedback"] if i["kind"] == kind)


@needs_sandbox
def test_a_mean_of_squares_over_a_padded_count_is_named_as_sqrt_80_over_77(kstrata_eval):
    d = kstrata_eval("rmsnorm", f"{CASE}/rmsnorm_padded_count.py", "--scope", "small", "--no-time")
    said = _said(d, "constant_ratio")
    assert "1.01929" in said and "r^2 = 80/77" in said and "rounded up to a multiple of 16" in said, d["feedback"]
    # every draw fails at D=77, the offset draw too: which way its rows moved says nothing (rt82's live prompt
    # read "on this offset draw rows moved either way are wrong" for a kernel wrong on every draw)
    assert not _said(d, "draw_direction"), d["feedback"]


@needs_sandbox
def test_an_offset_failure_says_which_way_the_wrong_rows_moved(kstrata_eval):
    d = kstrata_eval("cross_entropy", f"{CASE}/ce_max_from_zero.py", "--scope", "small", "--no-time")
    said = _said(d, "draw_direction")
    assert "moved down" in said and "rows 1, 3, 5, 7" in said and "moved up are right" in said, d["feedback"]
    assert not _said(d, "input_sign"), d["feedback"]


@needs_sandbox
def test_a_swiglu_with_its_weights_exchanged_is_told_so(kstrata_eval):
    d = kstrata_eval("swiglu", f"{CASE}/swiglu_w3_first.py", "--scope", "small", "--no-time")
    said = _said(d, "swapped_operands")
    assert "`w1.weight` and `w3.weight`" in said and "exchanged" in said, d["feedback"]
