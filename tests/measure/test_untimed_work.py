"""A candidate cannot work while the baseline is timed, nor outside its own
timed calls (issue #16/#17: red-team variants of case 03 and 09).

The candidate's processes are stopped (SIGSTOP) whenever anything else is timed,
the round trip subtracted from its calls is bounded by the baseline's, and a
candidate whose process answers the untimed flush slower than the baseline's
is marked."""

from __future__ import annotations

import time

import psutil
import pytest

from kstrata.measure.remote import RemoteCandidate, untimed_work_note
from kstrata.sandbox import CandidateProcess, status
from kstrata.sandbox.client import fresh, host_pid_of
from kstrata.tasks.loader import resolve_task

needs_sandbox = pytest.mark.skipif(not status().usable, reason="bubblewrap cannot run here")

SPINNER = '''
import torch, torch.nn as nn
_t = torch.utils.data.dataloader.threading

def _spin():
    x = 0
    while True:
        x += 1

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _t.Thread(target=_spin, daemon=True).start()
        _t.Thread(target=_spin, daemon=True).start()

    def forward(self, x):
        return torch.relu(x)
'''


def _load(proc, source: str) -> None:
    """Load ``source`` as a relu candidate in ``proc`` (no static checks: the process is what is tested)."""
    task = resolve_task("relu")
    reply, _ = proc.request({"op": "load", "backend": "pytorch", "task": {
        "name": "relu", "path": str(task.path), "source": task.source,
        "meta": task.meta.model_dump(mode="json")}, "sources": {"source": source},
        "shape": task.small_shapes[0], "seed": 0, "init": []}, timeout_s=120)
    assert reply.get("ok"), reply


def _cpu_s(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


@needs_sandbox
def test_a_frozen_candidate_uses_no_cpu_and_runs_again_when_thawed():
    proc = fresh(CandidateProcess("pytorch", memory_mb=4096))
    try:
        _load(proc, SPINNER)
        host = host_pid_of(proc.zygote.proc.pid, proc.pid)
        assert host and host in proc._own_processes()
        stopped = proc.freeze()
        assert stopped >= 1 and psutil.Process(host).status() == psutil.STATUS_STOPPED
        before = _cpu_s([host])
        time.sleep(0.5)
        assert _cpu_s([host]) - before < 0.02  # its two spinning threads are stopped too
        proc.thaw()
        assert psutil.Process(host).status() != psutil.STATUS_STOPPED
        before = _cpu_s([host])
        time.sleep(1.0)
        assert _cpu_s([host]) - before > 0.05  # and spin again (on a busy machine they get a share of a CPU)
        # the handle the timer uses stops and continues it the same way
        rc = RemoteCandidate(proc)
        rc.hold()
        assert psutil.Process(host).status() == psutil.STATUS_STOPPED
        rc.release()
        assert psutil.Process(host).status() != psutil.STATUS_STOPPED
    finally:
        proc.thaw()
        proc.close()


def test_slow_untimed_flushes_are_marked():
    class Side:
        def __init__(self, ms):
            self.flush_ms = ms

    base = Side([5.0, 5.2, 4.9, 5.1])
    assert untimed_work_note(Side([5.1, 5.3, 5.0, 5.2]), base) is None
    note = untimed_work_note(Side([9.0, 9.4, 8.8, 9.1]), base)
    assert note is not None and note.startswith("untimed work:") and "5.05 ms" in note
    assert untimed_work_note(Side([9.0]), base) is None  # too few to tell


def test_any_suspicious_note_keeps_a_speedup_out_of_fast_p():
    from kstrata.bench.metrics import excluded_reason

    why = excluded_reason({}, {"suspicious": ["untimed work: the candidate's process took 9 ms"]})
    assert why is not None and "untimed work" in why


#: a helper process exec'd through a symlink named "bwrap", spinning (red-team round of 2026-12-03)
NAMED_BWRAP = '''
import os, sys, torch, torch.nn as nn

_link = "/tmp/bwrap"
if not os.path.exists(_link):
    os.symlink(sys.executable, _link)
if os.fork() == 0:
    os.execv(_link, [_link, "-c", "while True: pass"])


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


@needs_sandbox
def test_a_helper_named_bwrap_is_the_candidates_and_is_frozen():
    proc = fresh(CandidateProcess("pytorch", memory_mb=4096))
    try:
        _load(proc, NAMED_BWRAP)
        host = host_pid_of(proc.zygote.proc.pid, proc.pid)
        deadline = time.monotonic() + 20
        helpers = []
        while not helpers and time.monotonic() < deadline:
            helpers = [c for c in psutil.Process(host).children() if c.name() == "bwrap"]
            time.sleep(0.1)
        assert helpers, "the helper did not start"
        own = proc._own_processes()
        assert host in own and all(h.pid in own for h in helpers)
        proc.freeze()
        assert all(h.status() == psutil.STATUS_STOPPED for h in helpers)
        # bubblewrap's own processes (the one kstrata started, and the sandbox's init) are not the candidate's
        assert proc.zygote.proc.pid not in own
    finally:
        proc.thaw()
        proc.close()
