"""Two runs of an honest reduction whose summation order changes between calls
(float atomics on a GPU, the reversed program order on triton-interp) differ by
more than the dtype bound where the sum nearly cancels, yet each is within the
task's tolerance of the float64 oracle: correct (red-team rt48 left it open as
a false reject; it read 'incorrect, determinism'). A run outside the tolerance
still fails."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kstrata.cli.main import app

CASE = Path(__file__).parent / "cases" / "order_varying_reduction"


def _eval(candidate: Path) -> dict:
    r = CliRunner().invoke(app, ["eval", str(CASE / "task.py"), str(candidate), "--scope", "small", "--no-time",
                                 "--json", "--secret", "order-varying"])  # fixed draws: the verdict is the code's
    return json.loads(r.output[r.output.index("{"):])


def test_an_order_varying_cancelling_sum_is_correct():
    ev = _eval(CASE / "candidate.py")
    assert ev["verdict"] == "correct", (ev["check"], ev["evidence"])


def test_a_second_run_outside_the_tolerance_still_fails(tmp_path):
    bad = tmp_path / "every_other_call_off.py"
    bad.write_text((CASE / "candidate.py").read_text().replace(
        "return 1000.0 * c[..., perm].sum(dim=-1, keepdim=True)",
        "return 1000.0 * c[..., perm].sum(dim=-1, keepdim=True) + (_calls[0] % 2) * 0.5"))
    ev = _eval(bad)
    assert ev["verdict"] == "incorrect", ev["evidence"]
