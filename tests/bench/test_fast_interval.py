"""fast_p counts a task only on its speedup interval's lower bound (issue #17
item 6; case 03_tie_counted_as_faster)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.bench import metrics as M
from kstrata.bench.metrics import TaskOutcome

CASE = Path(__file__).resolve().parents[1] / "verify" / "cases" / "03_tie_counted_as_faster"


def test_tie_is_not_fast_whatever_the_point_estimate():
    tie = TaskOutcome("gelu", correct=True, speedup=1.04, speedup_ci=(0.97, 1.09))
    win = TaskOutcome("gelu", correct=True, speedup=1.2, speedup_ci=(1.1, 1.3))
    bare = TaskOutcome("gelu", correct=True, speedup=1.5)  # no interval: not demonstrated
    assert not tie.fast(1.0) and win.fast(1.0) and not bare.fast(1.0)
    assert tie.fast(0.9) and not win.fast(1.1)  # strictly above p
    weak = TaskOutcome("x", correct=True, speedup=3.0, speedup_ci=(2.9, 3.1), excluded="weak_match: zeros")
    assert not weak.fast(1.0)
    m = M.compute_metrics([tie, win, bare, weak], n_resamples=200)
    assert m["fast_1"].value == pytest.approx(1 / 4)
    # the excluded speedup is left out of the geomean; the tie and the bare one are in it
    assert m["geomean_speedup"].value == pytest.approx((1.04 * 1.2 * 1.5) ** (1 / 3))
    assert m["correct_rate"].value == 1.0
    assert M.format_speedup(1.04, (0.97, 1.09)) == "1.04x [0.97, 1.09]"
    tuned = TaskOutcome("y", correct=True, speedup=2.0, speedup_ci=(1.9, 2.1),
                        speedups={"metaschedule": 1.05}, speedups_ci={"metaschedule": (0.98, 1.12)})
    assert not tuned.fast(1.0, "metaschedule") and tuned.fast(1.0)


@pytest.mark.slow
def test_case03_check_script_never_counts_a_point_estimate(tmp_path):
    """The case's own script feeds kstrata's fast_p rule the point estimate alone:
    with no interval, a speedup is not demonstrated, whatever it reads (the
    interval's own verdict is tests/verify/test_cases_verify.py's case 03)."""
    kstrata = Path(sys.executable).parent / "kstrata"
    r = subprocess.run([str(kstrata), "eval", "gelu", str(CASE / "candidate.py"), "--backend", "pytorch",
                        "--json", "--scope", "small", "--budget-ms", "300"],
                       capture_output=True, text=True, timeout=600)
    out = tmp_path / "kstrata_output.txt"
    out.write_text(r.stdout)
    line = json.loads(r.stdout.strip().splitlines()[-1])
    assert line["verdict"] == "correct"
    checked = subprocess.run([sys.executable, str(CASE / "check_fast1.py"), str(out)],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
    assert "fast_1 = False" in checked.stdout and "fast_1 = True" not in checked.stdout, checked.stdout
    low, high = line["timing"]["speedup_ci"]
    outcome = TaskOutcome("gelu", correct=True, speedup=line["timing"]["speedup"], speedup_ci=(low, high))
    assert outcome.fast(1.0) == (low > 1.0)  # with the interval: its lower bound decides
