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


def test_sigint_from_a_candidate_leaves_its_zygote_running():
    """Case ``sandbox_init/sigint.py``: ``kill(1, SIGINT)`` at import, then an
    honest load. The zygote is started here with SIGINT handled (as the
    kstrata process's own sandboxes are), so without its own ``SIG_IGN`` it
    would take Python's handler and die of the KeyboardInterrupt."""
    import signal
    import uuid

    from kstrata.backends.registry import get_backend
    from kstrata.sandbox import CandidateDied
    from kstrata.sandbox.client import CandidateProcess, default_memory_mb, sandbox_env
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import task_record

    task = resolve_task("relu")
    # a zygote of its own (the tag is in its settings): never an idle one started with SIGINT ignored
    env = {**sandbox_env(get_backend("pytorch")), "KSTRATA_TEST_TAG": uuid.uuid4().hex}
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = CandidateProcess("pytorch", env=env, memory_mb=default_memory_mb()).start()
    finally:
        signal.signal(signal.SIGINT, before)
    try:
        try:
            h, _ = proc.request({"op": "load", "backend": "pytorch", "task": task_record(task),
                                 "sources": {"source": (CASE / "sigint.py").read_text()},
                                 "shape": task.full_shape({"B": 8, "D": 16}), "seed": 0, "init": [],
                                 "poison": 0}, timeout_s=120)
        except CandidateDied as e:
            pytest.fail(f"the candidate's SIGINT ended its sandbox: {e}")
        assert h.get("ok"), h
        assert proc.zygote is not None and proc.zygote.alive()
    finally:
        proc.close()
