"""Red team rt81: work a call leaves on torch's inter-op thread pool (or another native pool) after it
returns. rt79 named torch.jit.fork and its kin no_threads statically; a ``torch.jit.CompilationUnit``
compiled from a string reaches the same pool past those names (the fork is text), and the harness watched
Python threads only, so a GELU that moved a fifth of its rows onto the pool in timed calls ran them off the
judge's clock, unflagged (cases tests/measure/cases/rt81_pool_tail, rt81_pool_tail_asleep).

Now the harness waits, after each call on the CPU and before it replies, for the threads the call left
runnable (kstrata.sandbox.drain: the work is on the judge's clock), and one that used LEFT_MS of CPU
meanwhile is ``no_threads_left`` (a checked call's finding; a timed call's, reported at the fetch, rejects
the timing); the candidate process's pools sleep when idle whatever environment it was started with
(child.POOL_ENV); and CPU used while no request is under way between timed calls marks the timing
(remote.left_running_note).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from kstrata.sandbox import status

CASES = Path(__file__).parent / "cases"
sandboxed = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")

#: the case's candidate with its tail in every call (not only after the timing's first 150 calls)
#: (half the rows there: on this loaded machine a smaller tail was sometimes done before the harness looked)
TAIL = (CASES / "rt81_pool_tail" / "candidate.py").read_text().replace("AFTER = 150", "AFTER = -1") \
    .replace("(1 << 20)", "1").replace("SHARE = 0.2", "SHARE = 0.5")
HONEST = "import torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass ModelNew(nn.Module):\n" \
         "    def forward(self, x):\n        return F.gelu(x)\n"
FORK = '''
def tail(x: Tensor, o: Tensor) -> int:
    o.copy_(torch.nn.functional.gelu(x))
    return 0
def launch(x: Tensor, o: Tensor) -> Future[int]:
    return torch.jit.fork(tail, x, o)
'''


def test_the_wait_after_a_call_sees_work_left_on_the_inter_op_pool():
    """In this (test) process: a fork left unwaited is runnable when the call returns, the wait lasts
    until it is done (the output complete) and counts its CPU; a plain GELU's pool threads are asleep."""
    import torch
    import torch.nn.functional as F

    from kstrata.sandbox.drain import LEFT_MS, Drain

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # no intra-op workers: this process's may spin (no OMP_WAIT_POLICY=PASSIVE here)
    try:
        _wait_after_calls(torch, F, Drain, LEFT_MS)
    finally:
        torch.set_num_threads(threads)


def _wait_after_calls(torch, F, Drain, LEFT_MS) -> None:
    drain = Drain()
    x = torch.randn(1024, 1024)
    cu = torch.jit.CompilationUnit(FORK)
    lefts = []
    for _ in range(5):
        out = torch.empty_like(x)
        out[:512] = F.gelu(x[:512])
        cu.launch(x[512:], out[512:])  # half the rows on the pool: ~ms of CPU after the return
        _, left, stuck = drain()
        assert not stuck
        assert torch.equal(out, F.gelu(x))  # done when the wait ends
        lefts.append(left)
    assert max(lefts) >= LEFT_MS, lefts
    honest = []
    for _ in range(5):
        F.gelu(x)
        honest.append(drain()[1])
    assert max(honest) < LEFT_MS, honest


def test_cpu_while_waiting_between_timed_calls_marks_the_timing():
    from kstrata.measure.remote import left_running_note

    assert left_running_note(SimpleNamespace(idle_gap_ms=[0.0] * 39), timed_ms=100.0) is None
    assert left_running_note(SimpleNamespace(idle_gap_ms=[0.5] * 2), timed_ms=1.0) is None  # too few gaps
    assert left_running_note(SimpleNamespace(idle_gap_ms=[0.1] * 10), timed_ms=10.0) is None  # 1 ms: noise
    # an honest softmax timed against eager here: 6.6 ms over 71 gaps (the harness's way back to its read)
    assert left_running_note(SimpleNamespace(idle_gap_ms=[6.645 / 71] * 71), timed_ms=50.0) is None
    note = left_running_note(SimpleNamespace(idle_gap_ms=[0.5] * 20), timed_ms=100.0)  # 10 ms > 5%, > 0.3 a gap
    assert note and note.startswith("deferred work:") and "while waiting for the judge's next request" in note
    assert left_running_note(SimpleNamespace(idle_gap_ms=[0.5] * 20), timed_ms=1000.0) is None  # < 5%


def _process(source: str, env: bool = True):
    from kstrata.backends.registry import get_backend
    from kstrata.sandbox import CandidateProcess
    from kstrata.sandbox.client import fresh, sandbox_env
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import task_record

    task = resolve_task("gelu")
    proc = fresh(CandidateProcess("pytorch", memory_mb=2048,
                                  env=sandbox_env(get_backend("pytorch")) if env else {}))
    h, _ = proc.request({"op": "load", "backend": "pytorch", "task": task_record(task), "sources": {"source": source},
                         "shape": {"B": 1024, "D": 1024}, "seed": 0, "init": []}, timeout_s=180)
    assert h.get("ok"), h
    return proc


def _checked(source: str, calls: int = 4, env: bool = True, apart_s: float = 0.0) -> list[list[dict]]:
    import time

    import torch

    from kstrata.sandbox import wire

    proc = _process(source, env)
    try:
        out = []
        x = torch.randn(1024, 1024)
        for _ in range(calls):
            time.sleep(apart_s)  # the judge at work between requests
            bufs: list = []
            h, _ = proc.request({"op": "call", "inputs": wire.encode([x], bufs)}, bufs, timeout_s=120)
            assert h.get("ok"), h
            out.append([f for f in h.get("findings", []) if f.get("check") == "no_threads_left"])
        return out
    finally:
        proc.close()


@pytest.mark.slow
@sandboxed
def test_a_checked_call_that_leaves_work_on_the_pool_is_no_threads_left():
    """Before: no finding (the pool's thread is not a Python thread), or, where the tail was not done when
    the reply was built, a wrong output only. Now every such call is no_threads_left, named by its
    thread (torch's pool: PTThreadPool); an honest GELU's calls have none, even in a process started
    without the passive-pool environment (libgomp's spinning workers used 4-10 ms of CPU after each
    call there)."""
    from kstrata.sandbox import client

    client.close_zygotes()
    found = _checked(TAIL)
    assert all(found), found
    assert found[0][0]["evidence"]["thread"] == ["PTThreadPool"], found[0]
    assert not any(_checked(HONEST, env=False)), "an honest GELU's calls left no work"


@pytest.mark.slow
@sandboxed
def test_a_timed_call_that_leaves_work_on_the_pool_waits_for_it_and_is_reported():
    """Timed calls through the judge's timer: the wait puts the tail on the judge's clock, and the fetch
    reports it (no_threads_left, which rejects the timing: remote.INTEGRITY_DURING_TIMING)."""
    import torch

    from kstrata.measure.remote import INTEGRITY_DURING_TIMING, RemoteCandidate, RemoteTimer

    assert "no_threads_left" in INTEGRITY_DURING_TIMING
    proc = _process(TAIL)
    try:
        rc = RemoteCandidate(proc)
        rc.stage([[torch.randn(1024, 1024)] for _ in range(2)], None, False)
        rc.calibrate()
        timer = RemoteTimer(lambda t: 0.0, "cpu", untrusted=[rc])
        for thunk in rc.thunks(2) * 4:
            timer(thunk)
        h, _ = proc.ok({"op": "fetch"})
        left = [f for f in h.get("findings", []) if f.get("check") == "no_threads_left"]
        assert left and left[0]["evidence"]["thread"] == ["PTThreadPool"], h.get("findings")
    finally:
        proc.close()


@pytest.mark.slow
@sandboxed
def test_a_tail_that_sleeps_through_the_wait_is_seen_while_the_harness_waits():
    """Case rt81_pool_tail_asleep (with a 20 ms nap, every call): the fork's thread sleeps while the harness
    waits after the call, then works while the harness waits for the judge's next request. The process's
    other threads' CPU over that wait (its CPU clock less the harness's own threads') is no_threads_left;
    an honest GELU's, with the judge 1.5 s away between calls (the harness's parent watch wakes each
    second), is none."""
    from kstrata.sandbox import client

    client.close_zygotes()
    asleep = (CASES / "rt81_pool_tail_asleep" / "candidate.py").read_text().replace("AFTER = 150", "AFTER = -1") \
        .replace("(1 << 20)", "1").replace("NAP_S = 0.002", "NAP_S = 0.02")
    found = _checked(asleep, calls=4, apart_s=0.1)
    assert all(found[2:]), found  # from the second wait past LEFT_MS on (one small one is noise: rt86)
    assert any("while the harness waited" in f[0]["message"] for f in found[2:]), found
    assert not any(_checked(HONEST, calls=3, apart_s=1.5)), "an honest GELU left no work"


def test_one_small_wait_over_the_limit_is_noise_two_or_a_large_one_are_left_work():
    """Red team rt86: once, at load 10, an honest relu's threads used 0.216 ms while the harness waited for
    the judge's next request (LEFT_MS is 0.2) and the timing was rejected. A tail that pays off runs after
    every timed call: the second wait past the limit, or one past ten times it, is left work."""
    from kstrata.sandbox.child import Harness

    class Waits:
        def __init__(self, ms):
            self.ms = list(ms)

        def waited_ms(self):
            return self.ms.pop(0)

    h = Harness()
    h.drain = Waits([0.25, 0.05])
    h.waited()
    h.waited()
    assert h.left_work is None
    h.drain = Waits([0.3])
    h.waited()
    assert h.left_work is not None and h.left_work["left_ms"] == 0.3 and h.left_work["waiting"]
    big = Harness()
    big.drain = Waits([2.5])
    big.waited()
    assert big.left_work is not None and big.left_work["left_ms"] == 2.5
