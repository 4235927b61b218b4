"""A new bench goes into a new or empty folder only, as a run and an export
do (newcomer nc16: ``--out`` a folder holding ``notes.txt`` wrote a run among
the user's files; a bench wrote ``bench.json`` and its runs the same way)."""

from __future__ import annotations

import pytest
from bench_helpers import CorrectUntimed, make_bench

from kstrata.bench.harness import BenchError


def test_a_bench_refuses_a_folder_of_the_users_files(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes")
    with pytest.raises(BenchError, match=r"not a kstrata bench \(it holds notes\.txt\)"):
        make_bench(folder)
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def _untimed(spec, backend, secret, pool, shape=None):
    """A stand-in evaluator (every candidate correct, none timed): what is tested
    here is the bench folder's lock; test_harness.py's benches verify and time
    for real (the real evaluator made this test 24 s, the lock checks take <1 s)."""
    return CorrectUntimed()


def test_a_second_bench_on_one_folder_is_refused(tmp_path):
    """One bench writes a bench folder at a time (kstrata.store.lock), as one
    optimize writes a run."""
    import subprocess
    import sys

    from kstrata.store.run_store import StoreError

    make_bench(tmp_path / "b", tasks=("relu",), proposers=("edits",), evals=1, evaluator_factory=_untimed)
    hold = ("import sys, time\nfrom kstrata.store.lock import run_lock\n"
            "with run_lock(sys.argv[1], 'kstrata bench'):\n    print('held', flush=True)\n    time.sleep(600)\n")
    holder = subprocess.Popen([sys.executable, "-c", hold, str(tmp_path / "b")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreError, match=rf"in use by PID {holder.pid} \(kstrata bench\)"):
            make_bench(tmp_path / "b", tasks=("relu",), proposers=("edits",), evals=2, resume=True,
                       evaluator_factory=_untimed)
    finally:
        holder.kill()
        holder.wait()
    assert make_bench(tmp_path / "b", tasks=("relu",), proposers=("edits",), evals=2, resume=True,
                      evaluator_factory=_untimed).ran
