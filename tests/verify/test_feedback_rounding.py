"""Located feedback for a rounding fault on an integer output (queue round rt66,
agents_queue_rt66.txt: an int8 cast that truncated was told only where it was
wrong, and the model had to work out the direction from the values)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import torch

from kstrata.verify.feedback import values_item

CASE = Path(__file__).resolve().parent / "cases" / "rt66_truncating_cast"


def _text(got: list[float], want: list[float]) -> str:
    c, o = torch.tensor(got, dtype=torch.float64), torch.tensor(want, dtype=torch.float64)
    return values_item(c, o, c != o)["text"]


def test_one_step_toward_zero_is_named_a_truncating_cast():
    text = _text([-77, 30, 5, 0], [-78, 31, 6, 0])
    assert "one step toward zero" in text and "truncates" in text


def test_one_step_away_from_zero_is_named_ties_away():
    assert "ties rounded away from zero" in _text([-3, 4, 7], [-2, 3, 6])


def test_mixed_directions_or_other_amounts_name_no_rounding():
    for got, want in (([-77, 32], [-78, 31]), ([-76, 29], [-78, 31]), ([1.5, 2.5], [0.5, 1.5])):
        text = _text(got, want)
        assert "toward zero" not in text and "away from zero" not in text


def test_eval_of_a_truncating_int8_quantizer_names_it():
    p = subprocess.run([sys.executable, "-m", "kstrata", "eval", "quantize_per_tensor", str(CASE / "candidate.py"),
                        "--no-time", "--scope", "small", "--json"], capture_output=True, text=True, timeout=600)
    out = json.loads(p.stdout)
    assert out["verdict"] == "incorrect"
    texts = [f.get("text", "") for f in out.get("feedback", [])]
    assert any("one step toward zero" in t for t in texts), texts
