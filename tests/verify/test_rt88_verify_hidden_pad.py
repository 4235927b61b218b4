"""Red team rt88: the hidden stage's length told the hidden tests to a client that timed its call (rt74's
open hidden-time channel). Where the caller sees the duration (``pad_hidden``: the MCP server, the RL
environment) the stage is padded to a rung of a budget fixed before it ran (kstrata.verify.hidden_pad).
Case: tests/verify/cases/rt88_hidden_stage_length (a candidate that spins 1.5 s at its first hidden call
when that shape's first size is odd)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from kstrata.sandbox import status
from kstrata.verify import hidden_pad

CASE = Path(__file__).resolve().parent / "cases" / "rt88_hidden_stage_length" / "candidate.py"


def test_a_stage_is_padded_to_the_smallest_rung_it_fits():
    assert hidden_pad.padded_s(0.3, 2.0) == 2.0
    assert hidden_pad.padded_s(2.0, 2.0) == 2.0
    assert hidden_pad.padded_s(2.1, 2.0) == 4.0
    assert hidden_pad.padded_s(9.0, 2.0) == 16.0
    # whatever the elapsed time, the duration is one of a few values: budget x 2^j
    seen = {hidden_pad.padded_s(e / 10, 3.0) for e in range(1, 1000)}
    assert seen == {3.0 * 2 ** j for j in range(7)}  # 99.9 s: 192


def test_the_budget_follows_the_public_stage_and_the_plan_only():
    pub = [{"B": 8, "D": 512}] * 4
    small = [{"B": 8, "D": 512}] * 8
    assert hidden_pad.budget_s(3.0, pub, small) == pytest.approx(3.0 * 2 * hidden_pad.SHARE)
    big = small + [{"B": 4096, "D": 4096}]  # one test of 16 M elements: 17 small tests' cost, not 4096
    assert hidden_pad.budget_s(3.0, pub, big) == pytest.approx(3.0 * hidden_pad.SHARE * (8 + 17) / 4, rel=0.01)
    assert hidden_pad.budget_s(0.01, pub, small) == hidden_pad.FLOOR_S


def test_pad_sleeps_to_the_rung_and_never_past_the_end_given():
    t = time.monotonic()
    hidden_pad.pad(t - 0.25, 0.4)
    assert time.monotonic() - t == pytest.approx(0.15, abs=0.1)
    assert hidden_pad.LAST["padded_s"] == pytest.approx(0.4)
    t = time.monotonic()
    hidden_pad.pad(t, 100.0, end_by=t + 0.2)
    assert time.monotonic() - t < 1.0


@pytest.mark.slow
@pytest.mark.skipif(not status().usable, reason="no sandbox here")
def test_the_hidden_stage_lasts_a_rung_of_its_budget_whatever_the_candidate_spends():
    """Before: the verification's length was the public stage's plus the hidden stage's own, the
    1.5 s spin included or not (the parity of the first hidden size); now the hidden stage, from its
    start to the return, lasts budget x 2^j."""
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import runner

    hidden_pad.LAST.clear()
    src = CASE.read_text()
    ev = runner.run_protocol(resolve_task("relu"), "pytorch", {"source": src}, "rt88-secret", scope="small",
                             timeout_s=300.0, pad_hidden=True)
    returned = time.monotonic()
    assert ev["verdict"] == "correct", ev
    rung = hidden_pad.LAST["padded_s"] / hidden_pad.LAST["budget_s"]
    assert abs(math.log2(rung) - round(math.log2(rung))) < 1e-6
    assert hidden_pad.LAST["padded_s"] >= hidden_pad.LAST["elapsed_s"]
    assert returned - hidden_pad.LAST["end"] < 0.5  # nothing of the candidate's after the pad
