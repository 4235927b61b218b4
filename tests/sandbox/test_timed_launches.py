"""Timed calls that do less work than checked calls (red-team round 4): a
candidate that tells a timed call from a checked one (here by what a fresh
allocation holds: the checked calls' poisoned allocations read NaN or huge)
launched its DSL kernel only when checked and computed with PyTorch when
timed, correct both ways. The candidate process counts the DSL's launches in
every call, on a launcher wrapped once before any candidate code runs; in a
process that only times, untimed calls on the first copy under the checked
calls' conditions give the count a timed call must reach, and a fetch of
timed outputs reports ``kernel_launched`` (the judge rejects it as
``timed_output``). Driven here through the candidate process's requests, as
:mod:`kstrata.measure.remote` drives them (triton-interp: fast to load)."""

from __future__ import annotations

import pytest
import torch

from kstrata.sandbox import CandidateProcess, sandbox_env, status, wire
from kstrata.sandbox.client import fresh

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")

SOURCE = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


@triton.jit
def canary_kernel(s_ptr):
    tl.store(s_ptr, 1.0)


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.act = nn.ReLU()

    def forward(self, x):
        probe = torch.empty(1).item()
        if not TIMING_PROCESS and (HONEST or probe != probe or abs(probe) > 1e37):  # a checked call: the kernel
            y = torch.empty_like(x)
            relu_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
            return y
        if CANARY:  # one launch of another kernel keeps the count
            canary_kernel[(1,)](torch.zeros(1))
        return self.act(x)  # a timed call: PyTorch
'''


def timed_findings(honest: bool, canary: bool = False, timing_process: bool = False) -> list[dict]:
    from kstrata.backends.registry import get_backend
    from kstrata.tasks.loader import resolve_task

    task = resolve_task("relu")
    proc = fresh(CandidateProcess("triton-interp", env=sandbox_env(get_backend("triton-interp")), memory_mb=4096))
    try:
        shape = task.small_shapes[0]
        h, _ = proc.request({"op": "load", "backend": "triton-interp", "task": {
            "name": "relu", "path": str(task.path), "source": task.source,
            "meta": task.meta.model_dump(mode="json")}, "sources": {"source": SOURCE.replace("HONEST", str(honest)).replace("CANARY", str(canary))
                                              .replace("TIMING_PROCESS", str(timing_process))},
            "shape": shape, "seed": 0, "init": []}, timeout_s=120)
        assert h.get("ok"), h
        bufs: list = []
        enc = wire.encode([[torch.randn(4, 64)], [torch.randn(4, 64)]], bufs)
        proc.ok({"op": "stage", "sets": enc, "flush_bytes": 0, "flush": False}, bufs, timeout_s=120)
        for i in (0, 1):
            proc.ok({"op": "run", "i": i}, timeout_s=120)
        h, _ = proc.ok({"op": "fetch", "inputs_of": 1}, timeout_s=120)
        return h.get("findings") or []
    finally:
        proc.close()


def test_a_timed_call_that_launches_no_kernel_is_reported():
    found = timed_findings(honest=False)
    assert [f["check"] for f in found] == ["kernel_launched"], found
    assert found[0]["evidence"] == {"timed": 0, "checked": 1, "kernels_missing": 1}


def test_a_canary_kernel_that_keeps_the_count_is_reported():
    found = timed_findings(honest=False, canary=True)
    assert [f["check"] for f in found] == ["kernel_launched"], found
    assert found[0]["evidence"] == {"timed": 1, "checked": 1, "kernels_missing": 1}


def test_a_candidate_that_knows_it_is_only_timed_is_reported():
    """In a process that only times, the candidate may know it (its first call
    is at the timing shape) and skip its kernel in every call, the untimed
    reference calls included: their operator records see the PyTorch work."""
    found = timed_findings(honest=False, canary=True, timing_process=True)
    assert [f["check"] for f in found] == ["kernel_launched"], found
    assert found[0]["evidence"]["compute"] == ["relu"], found


def test_an_honest_candidate_launches_alike():
    assert timed_findings(honest=True) == []


def test_the_timed_calls_report_it_as_integrity_during_timing():
    from kstrata.measure.remote import INTEGRITY_DURING_TIMING

    assert "kernel_launched" in INTEGRITY_DURING_TIMING
