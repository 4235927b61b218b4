"""The sandbox's PID 1 is the zygote (``bwrap --as-pid-1``), which is not
dumpable: a candidate can neither read nor write its memory, and as the PID
namespace's init it gets no signal it has no handler for (red-team round of
2026-12-04: bubblewrap's own init was dumpable, its ``/proc/1/mem`` opened for
writing, and it is spared by ``kill(-1)`` and by the freeze)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kstrata.sandbox import status

CASE = Path(__file__).resolve().parent / "cases" / "sandbox_init"

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def test_the_candidate_cannot_reach_its_sandboxs_init(probe_eval):
    if "--as-pid-1" not in subprocess.run(["bwrap", "--help"], capture_output=True, text=True).stdout:
        pytest.skip("this bubblewrap has no --as-pid-1")
    r = probe_eval(CASE / "candidate.py")
    assert r["init_mem"].startswith("ERR") and r["init_maps"].startswith("ERR"), r
    assert r["parent"] == 1, r  # its parent, the zygote, is the init
    assert r["parent_state_after_sigstop"] != "T", r
