"""What a tvm-cuda build says about a schedule that cannot run (queue round
rt58, checked on the CPU with TVM's CUDA code generation): a block of 2048
threads built without complaint (its launch fails on the GPU with an error
naming neither the kernel nor the limit), and a schedule that bound no loop
failed with "built cuda module has no device module"."""

from __future__ import annotations

import pytest

from kstrata.backends.registry import get_backend
from kstrata.backends.base import CandidateLoadError
from kstrata.tasks.loader import resolve_task

HEADER = "# kstrata-tvm schedule: one `def schedule_<primfunc>(sch)` per scheduled PrimFunc\n\n\n"


def _threads(n: int) -> str:
    return HEADER + f'''def schedule_softmax(sch):
    sch.compute_inline(sch.get_sblock("T_softmax_exp"))
    norm = sch.get_sblock("T_softmax_norm")
    row, col = sch.get_loops(norm)
    co, ci = sch.split(col, factors=[None, {n}])
    sch.bind(row, "blockIdx.x")
    sch.bind(ci, "threadIdx.x")
    for name in ["T_softmax_expsum", "T_softmax_maxelem"]:
        b = sch.get_sblock(name)
        sch.set_scope(b, 0, "shared")
        sch.compute_at(b, row)
        k = sch.get_loops(b)[-1]
        ko, ki = sch.split(k, factors=[None, {n}])
        sch.bind(ki, "threadIdx.x")
'''


@pytest.fixture(scope="module")
def cuda():
    return get_backend("tvm-cuda")


def _build(cuda, schedule: str) -> str:
    task = resolve_task("softmax")
    return cuda.generate_source(task, {**cuda.initial_sources(task), "schedule": schedule}, task.small_shapes[-1])


def test_a_block_of_more_threads_than_a_gpu_allows_is_a_build_error(cuda):
    with pytest.raises(CandidateLoadError) as e:
        _build(cuda, _threads(2048))
    msg = str(e.value)
    assert "2048 threads per block" in msg and "at most 1024" in msg and "softmax_kernel" in msg, msg


def test_the_same_schedule_within_the_limit_builds(cuda):
    code = _build(cuda, _threads(256))
    assert "__launch_bounds__(256)" in code


def test_a_schedule_that_binds_nothing_is_told_to_bind(cuda):
    unbound = HEADER + 'def schedule_softmax(sch):\n    sch.compute_inline(sch.get_sblock("T_softmax_exp"))\n'
    with pytest.raises(CandidateLoadError) as e:
        _build(cuda, unbound)
    msg = str(e.value)
    assert "bound to a GPU thread" in msg and "blockIdx.x" in msg, msg
