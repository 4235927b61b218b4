"""Small checked calls run with one intra-op thread, in the judge and in the
candidate's process (issue #23: a deep net's per-op thread barriers on a busy
2-vCPU machine; kstrata.verify.runner.SINGLE_THREAD_FLOPS gives the numbers).
The task here is written for the test: its reference's output says how many
threads it ran with."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from kstrata.sandbox import status
from kstrata.tasks.loader import load_task
from kstrata.verify import verify_candidate
from kstrata.verify.plan import LARGE_TEST_BYTES, LARGE_TEST_FLOPS
from kstrata.verify.runner import SINGLE_THREAD_BYTES, SINGLE_THREAD_FLOPS, check_threads

THREADED = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """x, plus 1000 per intra-op thread beyond the first it runs with."""

    def forward(self, x):
        return x + 1000.0 * (torch.get_num_threads() - 1)

batch_size = 16
dim = 32

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
'''

PLAIN = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x + 0.0
'''


def _task(flops, nbytes):
    return SimpleNamespace(flops=lambda shape: flops, bytes=lambda shape: nbytes)


def test_threads_by_the_calls_size_the_machines_load_and_device():
    small = _task(SINGLE_THREAD_FLOPS, SINGLE_THREAD_BYTES)
    assert check_threads(small, {}, "cpu", 2, load=0.0) == 1
    mid = _task(SINGLE_THREAD_FLOPS * 2, 1.0)  # DenseNet201's 0.55 GFLOP scaled shape
    assert check_threads(mid, {}, "cpu", 2, load=0.5) == 2  # an idle machine: both threads
    assert check_threads(mid, {}, "cpu", 2, load=7.0) == 1  # a busy one: one
    large = _task(LARGE_TEST_FLOPS * 2, 1.0)  # a nominal GEMM
    assert check_threads(large, {}, "cpu", 2, load=7.0) == 2
    assert check_threads(_task(0.0, LARGE_TEST_BYTES * 2), {}, "cpu", 2, load=7.0) == 2
    assert check_threads(_task(None, None), {}, "cpu", 2, load=7.0) == 2  # no counts: the default
    assert check_threads(_task(1.0, 1.0), {}, "cuda:0", 4, load=7.0) == 4


@pytest.fixture(scope="module")
def pool():
    from kstrata.execute.shared import lend

    with lend() as p:  # this process's warm judge worker, when another module gave one back
        yield p


@pytest.mark.skipif(not status().usable, reason="bubblewrap cannot run here")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: every call runs with one thread anyway")
def test_the_judge_and_the_candidates_checked_calls_run_small_shapes_with_one_thread(tmp_path, pool):
    path = tmp_path / "threaded.py"
    path.write_text(THREADED)
    task = load_task(path)
    # the reference ran with one thread in the judge: a plain x + 0 matches it
    plain = verify_candidate(task, "pytorch", {"source": PLAIN}, secret="th" * 16, pool=pool, scope="small")
    assert plain.verdict.value == "correct", plain.evidence
    # and with one thread in the candidate's process: the reference's own text matches itself
    own = verify_candidate(task, "pytorch", {"source": THREADED + "\nModelNew = Model\n"}, secret="th" * 16,
                           pool=pool, scope="small")
    assert own.verdict.value == "correct", own.evidence
