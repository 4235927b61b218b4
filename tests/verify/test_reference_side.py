"""The reference's own failures are the reference's (issue #23): a reference
that runs out of memory, or whose calls alone outlast the time limit, is named
as such before any candidate call, never blamed on the candidate.

The task files are small KernelBench-format files written by the tests."""

from __future__ import annotations

import time

import pytest
import torch

from kstrata.backends.registry import get_backend
from kstrata.execute import WorkerPool
from kstrata.sandbox import status
from kstrata.tasks.base import ReferenceFailure
from kstrata.tasks.loader import load_task
from kstrata.verdict import Verdict
from kstrata.verify import reference, runner, verify_candidate
from kstrata.verify.plan import hidden_tests, public_tests

SLOW = '''import time
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        time.sleep(0.3)
        return x * 2

n = 64

def get_inputs():
    return [torch.randn(n)]

def get_init_inputs():
    return []
'''

HUNGRY = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        waste = torch.empty(1 << 52)  # 16 PiB: the allocator refuses it
        return x * 2 + waste[:1]

n = 64

def get_inputs():
    return [torch.randn(n)]

def get_init_inputs():
    return []
'''

CANDIDATE = '''import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return x * 2
'''


def _task(tmp_path, name, text):
    p = tmp_path / f"{name}.py"
    p.write_text(text)
    return load_task(p)


def _draw(module, test):
    return list(module.get_inputs())


def test_preflight_estimates_the_judges_time_and_refuses_a_slow_reference(tmp_path):
    task = _task(tmp_path, "slow_ref", SLOW)
    tests = public_tests(task) + hidden_tests(task, "s" * 32, [], base=task.small_shapes)
    t0 = time.perf_counter()
    with pytest.raises(ReferenceFailure) as e:
        reference.preflight(task, tests, 5.0, "cpu", runner.oracle_model, _draw)
    msg = str(e.value)
    assert "reference" in msg and "not the candidate" in msg and "--timeout" in msg
    assert time.perf_counter() - t0 < 5.0  # one reference and one oracle call, not the plan
    # with room enough it passes and says what it measured
    out = reference.preflight(task, tests, 10_000.0, "cpu", runner.oracle_model, _draw)
    assert out["ref_s"] >= 0.3 and out["estimate_s"] >= 0.3 * len(tests)


def test_preflight_names_the_reference_when_it_runs_out_of_memory(tmp_path):
    task = _task(tmp_path, "hungry_ref", HUNGRY)
    tests = public_tests(task)
    with pytest.raises(ReferenceFailure, match="reference ran out of memory.*not the candidate"):
        reference.preflight(task, tests, 600.0, "cpu", runner.oracle_model, _draw)


def test_the_protocol_stops_on_the_reference_before_a_candidate_process_starts(tmp_path, monkeypatch):
    task = _task(tmp_path, "slow_ref", SLOW)

    def no_candidate(*a, **k):
        raise AssertionError("a candidate process was started before the reference was checked")

    monkeypatch.setattr(runner, "fresh", no_candidate)
    # the judge's share of the verification is 3 x the candidate's --timeout (newcomer nc16)
    with pytest.raises(ReferenceFailure, match="cannot be verified within the 15 s limit"):
        runner.run_protocol(task, "pytorch", {"source": CANDIDATE}, "s" * 32, scope="small", timeout_s=5.0)


@pytest.mark.skipif(not status().usable, reason="bubblewrap cannot run here")
def test_verify_candidate_raises_the_references_memory_failure_not_a_candidate_verdict(tmp_path):
    task = _task(tmp_path, "hungry_ref", HUNGRY)
    with WorkerPool(size=1) as pool, pytest.raises(ReferenceFailure, match="reference ran out of memory"):
        verify_candidate(task, "pytorch", {"source": CANDIDATE}, secret="s" * 32, pool=pool, scope="small",
                         timeout_s=120.0)


def test_a_timeout_says_which_side_used_the_time(tmp_path):
    task = _task(tmp_path, "slow_ref", SLOW)
    b = get_backend("pytorch")
    ctx = runner.Context(task, b, "pytorch", {}, {}, None, None)
    ctx.started = time.monotonic() - 10.0
    ctx.judge_s = 8.0
    stop = runner.Stop(Verdict.TIMEOUT, "wall_clock", "the candidate did not answer")
    ctx.blame_time(stop)
    assert stop.check == "reference_time" and "mostly in the task's reference" in stop.evidence["message"]
    assert stop.evidence["judge_s"] == 8.0 and 1.9 < stop.evidence["candidate_s"] < 2.5
    ctx.judge_s = 1.0
    stop = runner.Stop(Verdict.TIMEOUT, "wall_clock", "the candidate did not answer")
    ctx.blame_time(stop)
    assert stop.check == "wall_clock" and "the candidate's calls took 9." in stop.evidence["message"]


def test_is_oom_reads_the_allocators_errors():
    with pytest.raises(RuntimeError) as e:
        torch.empty(1 << 52)
    assert reference.is_oom(e.value) and reference.is_oom(MemoryError())
    assert not reference.is_oom(RuntimeError("shape mismatch"))


def test_an_allocation_failure_in_the_harness_reads_as_oom():
    # KSTRATA_CANDIDATE_MEMORY_MB=1500, relu at 4096 x 4096: the harness's comparison of the input with its
    # pristine copy failed after the call; the reply had no oom flag and the verdict read "candidate raised"
    msg = ("RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
           "memory: you tried to allocate 67108864 bytes. Error code 12 (Cannot allocate memory)")
    assert reference.says_oom(msg) and reference.says_oom("MemoryError: ")
    assert reference.says_oom("CUDA out of memory. Tried to allocate 2.00 GiB")
    assert not reference.says_oom("RuntimeError: shape '[4, 4]' is invalid for input of size 15")
