"""One writer per run folder (newcomer nc16: two ``kstrata optimize --resume``
of one run both ran on one run.db): a second optimize or retime is refused,
naming the PID that holds the run; a lock left by a killed process does not
block the next run."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask  # noqa: E402

from kstrata.cli import retime as R  # noqa: E402
from kstrata.search import Budget, optimize  # noqa: E402
from kstrata.store.run_store import StoreError  # noqa: E402

HOLD = ("import sys, time\nfrom kstrata.store.lock import run_lock\n"
        "with run_lock(sys.argv[1], 'kstrata optimize'):\n    print('held', flush=True)\n    time.sleep(600)\n")


def _resume(run_dir, evals):
    return optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=evals),
                    run_dir, resume=True)


def test_a_second_writer_is_refused_and_a_killed_holder_blocks_nothing(tmp_path, monkeypatch):
    run_dir = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=2),
                       tmp_path / "run").run_dir
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreError, match=rf"in use by PID {holder.pid} \(kstrata optimize\)"):
            _resume(run_dir, 3)
        monkeypatch.setattr(R, "open_run", lambda d: R.RunInfo(run_dir, FakeTask(), FakeBackend(), None,
                                                               ("eager",), "done"))
        with pytest.raises(StoreError, match=rf"in use by PID {holder.pid}"):
            R.retime_run(run_dir, evaluator=object())
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    res = _resume(run_dir, 3)  # the killed holder's lock is gone with it
    assert res.spent["evaluations"] == 3


def test_the_lock_is_reentrant_and_held_until_the_outermost_block_ends(tmp_path):
    import fcntl
    import os

    from kstrata.store.lock import LOCK_NAME, run_lock

    def free() -> bool:  # another open file of run.lock: flock conflicts across open files, even in one process
        fd = os.open(tmp_path / LOCK_NAME, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        finally:
            os.close(fd)
        return True

    with run_lock(tmp_path, "kstrata optimize"):
        with run_lock(tmp_path, "kstrata retime"):  # the CLI's lock, then the search's: no self-refusal
            assert not free()
        assert not free()  # the inner block's end leaves the outer one's lock
        assert (tmp_path / LOCK_NAME).read_text() == f"{os.getpid()} kstrata optimize\n"
    assert free()
    with pytest.raises(ZeroDivisionError), run_lock(tmp_path, "kstrata optimize"):
        1 / 0
    assert free()  # released on an error too


def test_resuming_where_no_run_is_refused_before_a_lock_file_is_made(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(StoreError, match=r"no run\.db; is this a kstrata run directory"):
        _resume(empty, 1)
    with pytest.raises(StoreError, match="no such directory"):
        _resume(tmp_path / "missing", 1)
    assert list(empty.iterdir()) == [] and not (tmp_path / "missing").exists()
