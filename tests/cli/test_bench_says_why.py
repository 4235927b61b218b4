"""``kstrata bench`` says why: a cell that did not run is counted, with why (a task the
backend ships no starting kernel for is ``unsupported``, its speedup column
says so and how to start from one's own kernel, and the closing count names
it (newcomer nc22: 'unsupported | none correct' and '0 run, 0 skipped,
0 failed' with no reason), and a mistyped --tasks name gets the suggestion
eval and tasks show give."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).parent / "cases" / "nc22"


def test_an_unsupported_cell_says_why_and_is_counted(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(CASES / "maxmean.py", suite / "maxmean.py")  # a user task: no shipped triton kernel
    r = subprocess.run([sys.executable, "-m", "kstrata", "bench", "--suite", str(suite), "--backends",
                        "triton-interp", "--proposers", "builtin", "--budget", "evals=1", "--out",
                        str(tmp_path / "b")], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       env={**__import__("os").environ, "COLUMNS": "300"})
    out = " ".join(r.stdout.split())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "none correct" not in out
    assert "not run: triton-interp ships no starting kernel for this task" in out
    assert "--initial FILE" in out
    assert "0 run, 0 skipped, 0 failed, 1 not run (unsupported" in out
    # the bench's report says it too, not "correct: no"
    r = subprocess.run([sys.executable, "-m", "kstrata", "report", str(tmp_path / "b"), "-o",
                        str(tmp_path / "r.html")], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    page = (tmp_path / "r.html").read_text()
    assert "not run: triton-interp ships no starting kernel for this task" in page


def test_a_mistyped_task_name_gets_a_suggestion(tmp_path):
    """Newcomer nc22: `bench --tasks relu,sofmax` said only "tasks sofmax are not in suite 'level1'"."""
    r = subprocess.run([sys.executable, "-m", "kstrata", "bench", "--suite", "level1", "--tasks", "relu,sofmax",
                        "--out", str(tmp_path / "b")], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    said = " ".join(r.stderr.split())
    assert r.returncode == 2 and "sofmax (did you mean: softmax" in said, r.stdout + r.stderr
    assert not (tmp_path / "b" / "bench.db").exists()
