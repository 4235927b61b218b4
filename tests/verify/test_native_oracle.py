"""Tests planned without a float64 oracle (``oracle="native"``, the largest
shapes): a correct candidate that sums a long reduction in another order than
PyTorch's is ``correct`` there, and one wrong only there is still not (issue #17).

The model-in-the-loop gemv run on tvm-llvm (benchmarks/results/agents_queue_tvm.txt)
had two correct schedules judged ``incorrect`` on the nominal 8192x8192 test:
``compare_native``'s bound has no term for the reference's own rounding, and an
fp32 sum of 8192 terms in another order than MKL's is off by more than
``2 * (atol + rtol * |y|)`` wherever the row's terms cancel.
"""

from __future__ import annotations

import textwrap

import pytest

from kstrata.sandbox import status
from kstrata.tasks.loader import load_task, resolve_task
from kstrata.verify import plan, runner

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")

GEMV = textwrap.dedent('''
    import torch
    import torch.nn as nn

    KSTRATA = {
        "level": 1, "category": "matmul", "dtype": "float32",
        "shapes": {"nominal": {"M": 2048, "K": 4096}, "small": [{"M": 8, "K": 33}], "sweep": [{"M": 3, "K": 2}]},
        "distributions": ["normal", "heavy_tailed"],
        "flops": "2*M*K", "bytes": "4*(M*K + K + M)",
    }
    M = 2048
    K = 4096


    class Model(nn.Module):
        def forward(self, A, x):
            return torch.matmul(A, x)


    def get_inputs():
        return [torch.randn(M, K), torch.randn(K, 1)]


    def get_init_inputs():
        return []
''')

#: fp32, one term after the other (a CPU loop's order, not MKL's blocked one)
SEQUENTIAL = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class ModelNew(nn.Module):
        def forward(self, A, x):
            y = torch.zeros(A.shape[0], 1)
            for k in range(A.shape[1]):
                y += A[:, k:k + 1] * x[k]
            return y
''')

#: the same, but it drops the last column where K > 1000 (wrong only at the large shape)
DROPS_A_COLUMN = SEQUENTIAL.replace("for k in range(A.shape[1]):",
                                    "for k in range(A.shape[1] - (A.shape[1] > 1000)):")


@pytest.fixture
def no_memory_wait(monkeypatch):
    """The judge reads the memory once instead of waiting up to
    :data:`kstrata.verify.judge_memory.WAIT_S` (30 s) for memory that a stand-in
    reading never frees: each of the two tests below waited that out (33 s and
    41 s of CI's 20 minutes). Its idle sandboxes are still ended, as in a real wait
    (``tests/verify/test_judge_memory_wait.py`` covers the wait itself)."""
    from kstrata.verify import judge_memory

    monkeypatch.setattr(runner, "wait_for_memory",
                        lambda need, deadline=None: judge_memory.wait_for_memory(need, deadline, wait_s=0.0))


def _verify(task, source: str, secret: str = "n" * 32):
    ev = runner.run_protocol(task, "pytorch", {"source": source}, secret, scope="small", timeout_s=300.0)
    return ev["verdict"], ev


def test_sequential_sum_is_correct_at_a_native_shape_and_a_dropped_term_is_not(tmp_path, monkeypatch):
    path = tmp_path / "gemv_seq.py"
    path.write_text(GEMV)
    task = load_task(path)
    # the nominal 2048x4096 (34 MB) is a native-oracle shape here, as 8192x8192 is for the suite's gemv
    monkeypatch.setattr(plan, "ORACLE_MAX_BYTES", 1e6)
    assert [t.oracle for t in plan.nominal_tests(task, "s", quick=True)[0]] == ["native"]
    verdict, ev = _verify(task, SEQUENTIAL)
    assert verdict == "correct", ev
    assert "nominal_shape" not in ev["evidence"], ev  # the nominal test ran
    verdict, ev = _verify(task, DROPS_A_COLUMN)
    assert verdict == "incorrect" and ev["check"] == "tolerance", ev


@pytest.mark.parametrize("short_of", ["ORACLE_TIME_FACTOR", "ORACLE_MEMORY_FACTOR"])
def test_without_the_float64_oracle_a_native_failure_is_never_a_pass(tmp_path, monkeypatch, short_of, no_memory_wait):
    """Where the float64 oracle cannot be had (no time or memory left for it),
    a test failing the native bound is never turned into a pass; since that
    bound has no term for the reference's own rounding (the sequential sum
    here is correct), it is no verdict either: the judge's side fails, saying
    why, instead of a verdict that depends on the machine's load."""
    from kstrata.tasks.base import ReferenceFailure

    path = tmp_path / "gemv_seq.py"
    path.write_text(GEMV)
    task = load_task(path)
    monkeypatch.setattr(plan, "ORACLE_MAX_BYTES", 1e6)
    monkeypatch.setattr(runner.ShapeRun, short_of, 1e12)
    with pytest.raises(ReferenceFailure, match="needs the float64 oracle") as e:
        _verify(task, SEQUENTIAL)
    assert ("time" if short_of == "ORACLE_TIME_FACTOR" else "MiB available") in str(e.value)


#: The run's two correct schedules (cassettes/gemv_tvm-llvm_hierarchical_m19_resume.jsonl, answers 0 and 3):
#: rfactor into 16 vector lanes (the sum reordered), and rows in parallel with K unrolled by 4.
HEADER = "# kstrata-tvm schedule: one `def schedule_<primfunc>(sch)` per scheduled PrimFunc\n"
RFACTOR = HEADER + '''
def schedule_matmul(sch):
    b = sch.get_sblock("matmul")
    i, j, k = sch.get_loops(b)
    ko, ki = sch.split(k, factors=[None, 16])
    rf = sch.rfactor(ki, factor_axis=2)
    r_i, r_j, r_ko, r_ki = sch.get_loops(rf)
    sch.vectorize(r_ki)
    wb = sch.get_sblock("matmul")
    sch.reverse_compute_at(wb, r_i)
    sch.parallel(r_i)
    sch.decompose_reduction(rf, r_ko)
'''
UNROLLED = HEADER + '''
def schedule_matmul(sch):
    b = sch.get_sblock("matmul")
    i, j, k = sch.get_loops(b)
    io, ii = sch.split(i, factors=[None, 16])
    ko, ki = sch.split(k, factors=[None, 4])
    sch.unroll(ki)
    sch.parallel(io)
'''


@pytest.fixture(scope="module")
def llvm_judge():
    """One tvm-llvm judge worker for both schedules (as ``kstrata optimize`` keeps one)."""
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    with pool_for(get_backend("tvm-llvm")) as p:
        yield p


@pytest.mark.slow
@pytest.mark.parametrize("schedule", [RFACTOR, pytest.param(UNROLLED, marks=pytest.mark.heavy)],
                         ids=["rfactor", "unrolled"])
def test_reordered_and_unrolled_gemv_schedules_are_correct(schedule, llvm_judge):
    """Verified for real on tvm-llvm at the nominal 8192x8192, where the run
    judged them: the shape is timed, so its hidden tests run (with the native
    oracle) as for a candidate timed there. Scope ``small`` for the rest: the
    full scope's sweep adds 8191x4099 under the float64 oracle at every seed
    and draw (minutes on two cores), a path the scaled-atol tests cover
    (test_tolerance_scale.py); the fault here was in ``compare_native``."""
    from kstrata.backends.registry import get_backend
    from kstrata.verify.api import verify_candidate

    secret = "gemv-a" * 6
    task = resolve_task("gemv")
    nominal = task.nominal_shape
    assert plan.oracle_kind(task, nominal) == "native"
    timed = plan.timed_shape_tests(task, secret, nominal)
    assert len(timed) >= 4 and {t.oracle for t in timed} == {"native"}
    graph = get_backend("tvm-llvm").initial_sources(task)["graph"]
    ev = verify_candidate(task, "tvm-llvm", {"graph": graph, "schedule": schedule}, secret=secret, scope="small",
                          timed_shapes=[nominal], pool=llvm_judge)
    assert str(ev.verdict.value) == "correct", ev
    assert ev.hidden_tests >= len(timed) and "nominal_shape" not in ev.evidence, ev


@pytest.mark.slow
def test_a_native_failure_the_judge_cannot_decide_is_no_verdict_not_incorrect(monkeypatch, no_memory_wait):
    """The rfactor gemv is correct against the float64 oracle but outside the
    native reference's bound at 8192x8192 (that bound has no term for the
    reference's own rounding). When the machine's available memory keeps the
    judge from computing the oracle, the verification must not read
    ``incorrect`` (a correct gemv did on a busy 2-core machine, newcomer run of
    2026-12-02): the judge's side fails, naming why."""
    import psutil

    from kstrata.backends.registry import get_backend
    from kstrata.tasks.base import ReferenceFailure
    from kstrata.verify import runner

    task = resolve_task("gemv")
    real = psutil.virtual_memory

    def scarce():
        return real()._replace(available=64 << 20)

    monkeypatch.setattr(psutil, "virtual_memory", scarce)
    graph = get_backend("tvm-llvm").initial_sources(task)["graph"]
    with pytest.raises(ReferenceFailure, match="float64 oracle") as e:
        runner.run_protocol(task, "tvm-llvm", {"graph": graph, "schedule": RFACTOR}, "gemv-a" * 6,
                            scope="small", timed_shapes=[task.nominal_shape])
    assert "MiB available" in str(e.value) and "not the candidate's" in str(e.value)
