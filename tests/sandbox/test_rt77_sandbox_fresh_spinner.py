"""Red team rt77: a process forked in each call, spinning through the judge's gap and reaped in the next
call (case cases/rt77_fresh_spinner_per_gap). The idle-CPU check (rt74) listed the sandbox at most once a
second and counted a process only when it was on the list at the reply and at the next request: this one was
on neither, and its CPU went into its reaper's clock inside a request; 0.45 s of spinning per 0.6 s gap read
0.1 ms. Now the sandbox is listed at every reply and request from its own /proc children files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kstrata.sandbox import status

sandboxed = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASES = Path(__file__).parent / "cases"


def _ended_for(source: str, monkeypatch) -> str | None:
    """test_redteam_rt74's _judged_slowly (load, six calls 0.6 s apart, a low bar): the cause the
    process was ended for, or None."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("rt74_for_rt77", Path(__file__).parent / "test_redteam_rt74.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod._judged_slowly(source, monkeypatch)


@sandboxed
def test_a_process_forked_per_call_and_reaped_in_the_next_is_counted(monkeypatch):
    why = _ended_for((CASES / "rt77_fresh_spinner_per_gap" / "candidate.py").read_text(), monkeypatch)
    assert why is not None and why.startswith("busy: "), why


def test_the_sandbox_tree_is_read_from_its_children_files():
    import os
    import subprocess

    from kstrata.sandbox.client import descendants

    child = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"])
    try:
        for _ in range(100):
            found = descendants(child.pid)
            if found is not None and len(found) >= 2:
                break
            time.sleep(0.02)
        assert found is not None and len(found) == 2
        assert all(os.path.exists(f"/proc/{p}") for p in found)
    finally:
        for pid in found or ():
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        child.kill()
        child.wait()
