"""Work a candidate leaves running when its timed call returns is seen from
outside its processes (their CPU time between timed calls, against the
baseline's), so a patched harness cannot hide it (red-team round of
2026-12-02: a thread finishing the softmax while the judge flushed the cache
read 5x faster, correct)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kstrata.measure.remote import deferred_work_note
from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task

#: softmax, honest when checked; when timed, a thread computes the output after forward returned (joined
#: at the next call: the fetch of a checked call's outputs runs none of the candidate's code)
DEFERRED = '''
import torch
import torch.nn as nn
import typing

_threading = getattr(typing.sys, "modules")["threading"]
_pending = []


def _join():
    while _pending:
        _pending.pop().join()


def _work(x, out):
    out.copy_(torch.softmax(x, dim=-1))


class ModelNew(nn.Module):
    def forward(self, x):
        if torch.are_deterministic_algorithms_enabled():
            return torch.softmax(x, dim=-1)
        _join()
        out = torch.empty_like(x)
        t = _threading.Thread(target=_work, args=(x, out))
        t.start()
        _pending.append(t)
        return out
'''


def _side(gaps):
    return SimpleNamespace(gap_cpu_ms=list(gaps))


def _noisy(mean, n, spread=0.3, seed=0):
    import random

    r = random.Random(seed)
    return [mean + r.uniform(-spread, spread) for _ in range(n)]


def test_the_note_needs_an_excess_over_every_threshold():
    base = _side(_noisy(5.0, 100))  # 500 ms of flushing
    assert deferred_work_note(_side(_noisy(5.0, 100, seed=1)), base, timed_ms=300.0) is None  # the same
    assert deferred_work_note(_side(_noisy(7.0, 100, seed=1)), base, timed_ms=1000.0) is None  # 200 < 0.25 * 1000
    note = deferred_work_note(_side(_noisy(7.0, 100, seed=1)), base, timed_ms=300.0)  # 200 > 75 and > 2
    assert note and note.startswith("deferred work:") and " ms more in all" in note
    assert 190 <= float(note.split(" ms more in all")[0].rsplit("(", 1)[1]) <= 210
    assert deferred_work_note(_side([7.0] * 2), base, timed_ms=1.0) is None  # too few calls to say
    assert deferred_work_note(_side(_noisy(7.0, 100, seed=1)), _side(_noisy(5.0, 50)), timed_ms=300.0)  # per gap
    # a wide spread (a loaded machine's flushes) hides a small excess: no note without 4 standard errors
    assert deferred_work_note(_side(_noisy(5.5, 30, spread=4.0, seed=1)), _side(_noisy(5.0, 30, spread=4.0)),
                              timed_ms=1.0) is None


def test_a_large_flush_does_not_hide_a_small_excess_per_gap():
    # a 480 MiB L3: the flush costs ~112 ms of CPU per gap; a deferred softmax adds ~2 ms to each (measured
    # 2026-12-02 with the processes' CPU clocks), which a fixed 15% of the baseline's gaps never saw
    base = _side(_noisy(112.3, 11, spread=0.7))
    assert deferred_work_note(_side(_noisy(114.8, 10, spread=0.9, seed=2)), base, timed_ms=4.2)
    # two processes flushing the same buffer differ by tenths of a percent: not deferred work
    assert deferred_work_note(_side(_noisy(112.6, 10, spread=0.05, seed=2)), _side(_noisy(112.3, 11, spread=0.05)),
                              timed_ms=4.2) is None


def test_process_cpu_clock_counts_exited_threads_in_nanoseconds():
    import subprocess
    import sys
    import time

    from kstrata.measure.remote import process_cpu_ms

    code = ("import threading, time\n"
            "def spin():\n t = time.process_time()\n while time.process_time() - t < 0.15: pass\n"
            "th = threading.Thread(target=spin); th.start(); th.join(); print('done', flush=True); time.sleep(30)")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "done"
        ms = process_cpu_ms(p.pid)
        assert ms is not None and ms >= 150.0  # the spinning thread had exited
    finally:
        p.kill()
        p.wait()
    time.sleep(0.05)
    assert process_cpu_ms(p.pid) is None


#: the same, joining its thread in a replaced ``Tensor.detach``, which the fetch's ``wire.encode`` calls on
#: each output: its checked calls' outputs were finished when read, and it read correct, unranked only
#: by the deferred-work note (red-team round of 2026-12-02)
JOINED_AT_FETCH = DEFERRED + '''

_T = getattr(torch, "Ten" + "sor")  # past the static checks: the timing must hold without them
_orig_detach = _T.detach


def _detach(self, *a, **k):
    _join()
    return _orig_detach(self, *a, **k)


_T.detach = _detach
'''


@pytest.mark.slow
@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
@pytest.mark.parametrize("source, check", [(DEFERRED, "timed_output"), (JOINED_AT_FETCH, "no_runtime_patching")],
                         ids=["joined_next_call", "joined_at_fetch"])
def test_a_thread_finishing_the_output_after_the_call_is_rejected(source, check):
    """A thread that finishes the output after the call returned leaves the
    first checked call's outputs unfinished when fetched (``timed_output``);
    joining it in a method the fetch calls is a replaced watched name
    (``Tensor.detach`` is watched since red-team rt52). Before that, the
    joined form read correct and only the deferred-work note
    (:func:`deferred_work_note`, whose thresholds the tests above check)
    kept its speedup from counting."""
    from kstrata.api import evaluate_sources
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    task = resolve_task("softmax")
    backend = get_backend("pytorch")
    pool = pool_for(backend)
    try:
        ev, _ = evaluate_sources(task, backend, {"source": source}, pool, preset="warn", scope="small",
                                 budget_ms=300.0, timing_shape={"B": 512, "D": 2048})
    finally:
        pool.close()
    assert (ev.verdict.value, ev.check) == ("rejected", check), ev.to_dict()


class _FetchingOwner:
    """A candidate handle whose output checks (every third call) cost 50 ms of its
    CPU, as fetching 524 MB of inputs did on the H200; other gaps cost 2 ms."""

    def __init__(self):
        self.proc, self.cpu, self.calls = object(), 0.0, 0
        self.gap_cpu_ms, self._cpu_after, self._fetched = [], None, False
        self.device_ms, self.overhead_ms = None, 0.0

    def cpu_ms(self):
        return self.cpu

    def after_call(self, i, last=False):
        self.calls += 1
        if self.calls % 3 == 0:
            self._fetched = True  # as RemoteCandidate.after_call marks a fetch
            self.cpu += 50.0

    def hold(self):
        pass

    def release(self):
        pass


class _Thunk:
    remote = True

    def __init__(self, owner):
        self.owner, self.i = owner, 0

    def prepare(self):
        self.owner.cpu += 2.0  # flush and freshen

    def __call__(self):
        pass


def test_gaps_holding_the_judges_output_fetch_are_not_deferred_work():
    from kstrata.measure.remote import RemoteTimer

    owner = _FetchingOwner()
    timer = RemoteTimer(lambda thunk: 0.0, "cpu", untrusted=[owner])
    for _ in range(30):
        timer(_Thunk(owner))
    assert len(owner.gap_cpu_ms) == 20  # 29 gaps, 9 of them after a fetch
    assert all(g == 2.0 for g in owner.gap_cpu_ms)
    assert deferred_work_note(owner, _side([2.0] * 29), timed_ms=10.0) is None
