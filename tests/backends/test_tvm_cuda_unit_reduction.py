"""The tvm-cuda default schedule at a unit reduction (2026-12-05, H200): the
rmsnorm start was wrong at D=1, the hidden size-1 probe's shape. dlight dropped
the unit reduction iterator but kept the block's init, then folded the epilogue
into it, so the reduction block accumulated into the function's output:
``out = x * rsqrt(out + x^2 + eps) * w`` after ``out = x * rsqrt(0 + eps) * w``
(benchmarks/results/gpu_tvm_cuda_unit_reduction.txt). Such a PrimFunc now gets
:func:`kstrata.backends.tvm.schedule.unit_reduction_schedule` (one kernel per
block, nothing inlined). Read from the scheduled TensorIR on the CPU (CUDA
codegen needs no GPU; the D=1 case failed before); the D=64 case guards the
check itself. Not yet run on a GPU."""

from __future__ import annotations

import re

import pytest

from kstrata.backends.registry import get_backend
from kstrata.tasks.loader import resolve_task


def _init_blocks_writing_the_output(D: int) -> list[str]:
    """Names of blocks with an init that write the PrimFunc's last parameter (its output)."""
    backend, task = get_backend("tvm-cuda"), resolve_task("rmsnorm")
    _, funcs, _, _ = backend.scheduled_funcs(task, backend.initial_sources(task), task.full_shape({"B": 8, "D": D}))
    bad = []
    for func in funcs.values():
        text = str(func)
        out = re.findall(r"(\w+): T\.Buffer\(", text.split("):\n", 1)[0])[-1]  # the signature's last buffer
        for block in re.split(r"with T\.sblock\(", text)[1:]:
            name = block.split('"')[1]
            body = block.split("with T.sblock(")[0]
            if "with T.init():" in body and re.search(rf"T\.writes\({out}\[", body):
                bad.append(name)
    return bad


def test_a_full_reduction_accumulates_apart_from_the_output():
    assert _init_blocks_writing_the_output(64) == []


def test_a_unit_reduction_accumulates_apart_from_the_output():
    assert _init_blocks_writing_the_output(1) == []
