"""Timed calls' outputs are held to the reference output's layout as checked calls are
(:mod:`kstrata.verify.layout`), with the strides the candidate process states for an
output that arrives row-major (gaps or overlaps; red-team 2026-12-04)."""

from __future__ import annotations

import torch

from kstrata.measure.candidate import _checker
from kstrata.tasks.loader import resolve_task


def _check():
    task = resolve_task("relu")
    model, _, _, _ = task.instantiate({"B": 4, "D": 16}, 0)
    x = torch.randn(4, 16)
    return _checker(task, model, [[x]]), x.clamp_min(0)


def test_a_timed_output_with_gaps_is_a_mismatch_and_a_contiguous_one_is_not():
    check, y = _check()
    assert check(0, [y]) is None and check(0, [y], None, [[16, 1]]) is None
    problem = check(0, [y], None, [[32, 1]])  # the unpadded slice of a buffer with padded rows
    assert problem is not None and "strides (32, 1)" in problem
    assert "without its strides" in check(0, [y], None, [None])
