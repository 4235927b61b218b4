"""A comparison's boolean output is decided at the draw's exact values (newcomer nc17): ``x >= 0.5``
for ``x > 0.5`` differs only at the grid draw's 0.5, which the tie excuse for integer outputs passed.
Case folder ``cases/nc17_threshold_compare``."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

CASE = "nc17_threshold_compare"
needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")


@needs_sandbox
def test_a_comparison_off_at_the_threshold_is_incorrect(kstrata_eval):
    d = kstrata_eval(f"{CASE}/task.py", f"{CASE}/ge.py", "--scope", "small", "--no-time")
    assert d["verdict"] == "incorrect", d


@needs_sandbox
def test_the_same_comparison_is_correct(kstrata_eval):
    d = kstrata_eval(f"{CASE}/task.py", f"{CASE}/honest.py", "--scope", "small", "--no-time")
    assert d["verdict"] == "correct", d
