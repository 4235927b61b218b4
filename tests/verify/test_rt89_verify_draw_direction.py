"""Queue round rt89: the draw_direction item (which way an offset/far draw moved the wrong rows) is given only
where the task's own normal draw passes. An online logsumexp rescaled with exp2 of a natural-log difference failed
normal, uniform and offset alike, and read "on this offset draw rows moved either way are wrong ...: the size of
the values, not their sign, breaks the kernel (a one-pass variance or a sum that cancels ...)"."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")


@needs_sandbox
def test_no_direction_item_when_the_normal_draw_fails_too(kstrata_eval):
    d = kstrata_eval("cross_entropy", "rt89_feedback/ce_online_exp2_rescale.py", "--scope", "small", "--no-time")
    assert d["verdict"] == "incorrect", d["evidence"]
    kinds = {i["kind"]: i["text"] for i in d["feedback"]}
    assert "draw_direction" not in kinds, kinds
    assert "normal" in kinds["distributions"].split(";")[0], kinds  # normal is among the failing draws
