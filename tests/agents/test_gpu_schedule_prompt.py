"""What a tvm-cuda schedule prompt says about scheduling for a GPU (queue
round rt58): the schedule sheet listed CPU primitives only (nothing on binding
loops to blocks and threads, the 1024-thread limit or cross-thread
reductions), and an empty schedule said "default GPU schedule" without
showing it, though a `schedule_<name>` replaces it whole."""

from __future__ import annotations

import pytest

from kstrata.agents.prompt import api_sheet
from kstrata.backends.registry import get_backend
from kstrata.backends.tvm.isolated import primfunc_context
from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task


def test_the_gpu_schedule_sheet_says_how_to_bind_and_the_thread_limit():
    sheet = api_sheet("tvm-cuda", "schedule")
    assert '"blockIdx.x"' in sheet and '"threadIdx.x"' in sheet and "1024" in sheet
    assert "cross-thread" in sheet
    assert "blockIdx" not in api_sheet("tvm-llvm", "schedule")


@pytest.mark.skipif(not status().usable, reason="no sandbox here")
def test_the_gpu_schedule_context_shows_the_default_schedule():
    task = resolve_task("softmax")
    cuda = primfunc_context(task, get_backend("tvm-cuda").initial_sources(task), "tvm-cuda")
    assert "default GPU schedule" in cuda and "def schedule_softmax(sch):" in cuda, cuda[-2000:]
    assert 'thread_axis="threadIdx.x"' in cuda
    llvm = primfunc_context(task, get_backend("tvm-llvm").initial_sources(task), "tvm-llvm")
    assert "default GPU schedule" not in llvm
