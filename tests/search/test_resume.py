"""A run SIGKILLed mid-way resumes without losing or repeating evaluations."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import search_resume_run as script

from kstrata.search import CandidateTree
from kstrata.store import RunStore

SCRIPT = Path(script.__file__)


def _evaluations(run_dir: Path) -> int:
    db = run_dir / "run.db"
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def _start_and_kill(run_dir: Path, log: Path, resume: bool, at: int) -> None:
    args = [sys.executable, str(SCRIPT), str(run_dir), str(log)] + (["resume"] if resume else [])
    proc = subprocess.Popen(args, env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        deadline = time.monotonic() + 60
        while _evaluations(run_dir) < at:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL


def _consistent(run_dir: Path) -> CandidateTree:
    with RunStore.open(run_dir) as s:
        c = s.conn
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert c.execute("PRAGMA foreign_key_check").fetchall() == []
        n_eval = c.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
        assert n_eval == c.execute("SELECT COUNT(DISTINCT candidate) FROM evaluations").fetchone()[0]
        assert n_eval == c.execute("SELECT COUNT(*) FROM candidates WHERE status='evaluated'").fetchone()[0]
        assert s.spent()["evaluations"] == n_eval
        for (h,) in c.execute("SELECT hash FROM candidates"):
            assert (run_dir / "candidates" / h / "schedule.txt").is_file()
        return CandidateTree.from_store(s)


def test_sigkill_and_resume_matches_uninterrupted_run(tmp_path):
    reference = script.main(str(tmp_path / "ref"), None, False, delay=0.0)

    run_dir, log = tmp_path / "killed", tmp_path / "calls.log"
    _start_and_kill(run_dir, log, resume=False, at=8)
    first = _consistent(run_dir)
    _start_and_kill(run_dir, log, resume=True, at=len(first.evaluated()) + 9)
    second = _consistent(run_dir)
    assert len(second.evaluated()) > len(first.evaluated())
    result = script.main(str(run_dir), str(log), True)
    tree = _consistent(run_dir)

    # nothing evaluated twice in the store; the evaluator itself re-ran at most
    # the one candidate in flight at each kill
    calls = log.read_text().splitlines()
    assert len(tree.evaluated()) == result.spent["evaluations"] == 45
    assert len(calls) - len(set(calls)) <= 2 and len(set(calls)) == 45
    assert tree.pending() == [] or result.stop_reason.startswith("budget")
    # same seed, same decisions: the same tree and best as the uninterrupted run
    assert [n.hash for n in tree] == [n.hash for n in reference.tree]
    assert result.best.hash == reference.best.hash
    assert result.best.speedup == reference.best.speedup
