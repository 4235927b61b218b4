"""``KSTRATA_CANDIDATE_MEMORY_MB`` counts from what the candidate's process
maps when it starts (red-team round 3): forked from a zygote that imported
torch, it maps about 1 GB before the candidate allocates anything, so a
1500 MiB address-space limit counted from zero left an honest relu at
4096 x 4096 out of memory in the harness's own checks, and a small limit
made the forked child fail its start and fall back into the zygote's loop,
hanging the verification until its time limit."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

RELU = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def _verify(monkeypatch, mb: int) -> dict:
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import run_protocol

    monkeypatch.setenv("KSTRATA_CANDIDATE_MEMORY_MB", str(mb))
    return run_protocol(resolve_task("relu"), "pytorch", {"source": RELU}, "5eed" * 4, preset="warn",
                        scope="small", timeout_s=150)


def test_an_honest_relu_at_its_nominal_shape_fits_1500_mib(monkeypatch):
    ev = _verify(monkeypatch, 1500)
    assert ev["verdict"] == "correct", ev["evidence"]


def test_a_limit_too_small_ends_the_candidate_instead_of_hanging(monkeypatch):
    """A process that cannot start under the limit is no verdict of the candidate's (no candidate code
    ran): kstrata's SandboxStartError, naming the limit and the variable that sets it."""
    import time

    from kstrata.sandbox.policy import SandboxStartError

    t0 = time.monotonic()
    with pytest.raises(SandboxStartError) as e:
        _verify(monkeypatch, 64)
    assert "64 MiB" in str(e.value) and "KSTRATA_CANDIDATE_MEMORY_MB" in str(e.value)
    assert time.monotonic() - t0 < 120  # not the verification's whole time limit


#: Forked children each touch 100 MiB: under RLIMIT_AS each (a process of its own) but together beyond
#: the sandbox's cgroup, whose OOM killer ends one of them or the zygote (driven without static checks)
FORKS = '''
import torch
import torch.nn as nn

_os = getattr(torch, "o" + "s")


class ModelNew(nn.Module):
    def forward(self, x):
        for _ in range(8):
            if _os.fork() == 0:
                try:
                    t = torch.ones(100 << 18)
                    while True:
                        _os.sched_yield()
                finally:
                    _os._exit(0)
        while True:
            _os.sched_yield()
'''


def test_a_death_from_the_cgroup_limit_reads_as_out_of_memory_naming_the_limit():
    """KSTRATA_CANDIDATE_MEMORY_MB=300 read ``runtime_error`` "the candidate
    process ended during a call" (red-team round 4): the OOM killer chose the
    zygote, whose death removed the sandbox's cgroup, OOM counter and all,
    before the judge read why its candidate died; and the zygote's own 230 MiB
    were charged against the 300, leaving a relu at 2048 x 2048 dead."""
    import torch

    from kstrata.sandbox import CandidateProcess, wire
    from kstrata.sandbox.client import CandidateDied, fresh
    from kstrata.tasks.loader import resolve_task

    task = resolve_task("relu")
    proc = fresh(CandidateProcess("pytorch", memory_mb=300))
    if proc.zygote is None or proc.zygote.cgroup is None:
        proc.close()
        pytest.skip("no cgroup here")
    try:
        def call(source: str, n: int) -> dict:
            h, _ = proc.request({"op": "load", "backend": "pytorch", "task": {
                "name": "relu", "path": str(task.path), "source": task.source,
                "meta": task.meta.model_dump(mode="json")}, "sources": {"source": source},
                "shape": task.small_shapes[0], "seed": 0, "init": []}, timeout_s=60)
            assert h.get("ok"), h
            bufs: list = []
            enc = wire.encode([torch.randn(n, n)], bufs)
            return proc.request({"op": "call", "inputs": enc, "poison": 1}, bufs, timeout_s=120)[0]

        assert call(RELU, 2048).get("ok")  # fits 300 MiB beyond the zygote's own
        with pytest.raises(CandidateDied) as e:
            call(FORKS, 4)
        assert e.value.cause == "memory" and "300 MiB" in str(e.value), (e.value.cause, str(e.value))
    finally:
        proc.close()


def test_a_batch_whose_copies_do_not_fit_answers_out_of_memory_per_call():
    """The harness's own copies of a call's inputs refused under RLIMIT_AS
    ended the whole batch (``call_many``) with one error, which the judge read
    as a tampered harness (``protocol``) at KSTRATA_CANDIDATE_MEMORY_MB=300 on
    an honest relu (red-team round 4): the failing call now answers for itself."""
    import torch

    from kstrata.sandbox import CandidateProcess, wire
    from kstrata.sandbox.client import CandidateDied, fresh
    from kstrata.tasks.loader import resolve_task

    task = resolve_task("relu")
    proc = fresh(CandidateProcess("pytorch", memory_mb=300))
    try:
        h, _ = proc.request({"op": "load", "backend": "pytorch", "task": {
            "name": "relu", "path": str(task.path), "source": task.source,
            "meta": task.meta.model_dump(mode="json")}, "sources": {"source": RELU},
            "shape": task.small_shapes[0], "seed": 0, "init": []}, timeout_s=60)
        assert h.get("ok"), h
        bufs: list = []
        small, big = (wire.encode([torch.randn(n, n)], bufs) for n in (8, 6144))  # 144 MiB, copied twice
        h, _ = proc.request({"op": "call_many", "calls": [{"op": "call", "inputs": small, "poison": 1},
                                                          {"op": "call", "inputs": big, "poison": 1}]},
                            bufs, timeout_s=120)
        replies = h.get("replies") or []
        assert [r.get("ok") for r in replies] == [True, False] and replies[1].get("oom"), h
        bufs = []  # inputs that the process cannot even take in: it exits, and that reads as the limit
        enc = wire.encode([torch.randn(16384, 16384)], bufs)  # 1 GiB
        with pytest.raises(CandidateDied) as e:
            proc.request({"op": "call", "inputs": enc, "poison": 1}, bufs, timeout_s=120)
        assert e.value.cause == "memory" and "300 MiB" in str(e.value), (e.value.cause, str(e.value))
    finally:
        proc.close()
