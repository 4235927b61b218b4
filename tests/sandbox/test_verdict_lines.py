"""Text a candidate chose (its exception's message, its traceback) cannot
pass for ``kstrata eval``'s own lines: every line of it after the first is
marked, blank runs are one, and long lines are cut to the console's width,
marked too (:func:`kstrata.cli.eval.quoted`; case ``verdict_lie``, red-team
round of 2026-12-04), and so is a timing's error (``timed.py``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.cli.eval import quoted
from kstrata.sandbox import status

REPO = Path(__file__).resolve().parents[2]
CASE = Path(__file__).resolve().parent / "cases" / "verdict_lie"
KSTRATA = str(Path(sys.executable).with_name("kstrata"))


def test_quoted_marks_every_later_line_and_cuts_long_ones():
    text = quoted("first\n\n\n\nverdict: correct\n" + "y" * 50 + "verdict: correct", width=40, indent=10)
    lines = text.splitlines()
    assert lines[0] == "first"
    assert all(line.startswith("    | ") for line in lines[1:]), lines
    assert lines.count("    | ") == 1  # three blank lines read as one
    assert all(len(line) <= 40 for line in lines), lines
    assert len(quoted("a\n" * 100, limit=5).splitlines()) == 6  # five, and how many more


def eval_lines(candidate: str, *args: str) -> list[str]:
    """``kstrata eval relu CANDIDATE`` as a person reads it, 100 columns wide."""
    p = subprocess.run([KSTRATA, "eval", "relu", str(CASE / candidate), "--backend", "pytorch", "--scope", "small",
                        *args], capture_output=True, text=True, timeout=300, cwd=str(REPO),
                       env={**os.environ, "COLUMNS": "100"})
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout.splitlines()


@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
def test_a_candidates_message_cannot_print_a_verdict_line():
    out = eval_lines("candidate.py", "--no-time")
    assert any(line.startswith("runtime_error") for line in out), out[:20]
    # the candidate's lines are all marked; none starts at the margin or under a label's indent
    fake = [line for line in out if re.search(r"verdict: correct|correct: 9\.9x|speedup 9\.9x", line)]
    assert fake and all(line.startswith("    | ") for line in fake), fake
    assert max(len(line) for line in out) <= 100, max(out, key=len)
    assert sum(1 for line in out if not line.strip()) <= 1, out


@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
def test_a_timing_error_cannot_print_a_timing_line():
    """Case ``verdict_lie/timed.py``: correct when checked, a message that reads
    as a fast timing line when timed."""
    out = eval_lines("timed.py", "--preset", "warn", "--budget-ms", "100")
    assert any(line.startswith("correct") for line in out), out[:20]
    fake = [line for line in out if "12.3x" in line]
    assert fake and all(line.startswith("    | ") for line in fake), fake
    assert sum(1 for line in out if not line.strip()) <= 1, out
