"""Evidence the judge takes from outside the candidate's process, and the
verdict's note on what it takes from inside (red-team round 3, sandbox).

A triton-interp candidate with no kernel forged the harness's launch record
through ``gc``, answered the no-op probe with garbage and computed the relu
with PyTorch where the in-process operator record does not look: in a thread
the call joins, in a forked child, or in a thread kept across calls and
hidden from ``threading``. The judge now counts, from the sandbox's process
IDs, the threads and processes a call started and ended, sees processes the
candidate left and, for triton-interp (one thread when honest), threads it
keeps (:class:`kstrata.sandbox.client.Churn`);
a correct verdict lists the checks that passed on the candidate process's
own report (:mod:`kstrata.sandbox.reported`). The static checks are at
preset ``warn``'s level for introspection: the judge must hold without them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.sandbox import status

CASE = Path(__file__).resolve().parent / "cases" / "judge_side_churn"
CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "good"

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


@pytest.fixture(scope="module")
def judge():
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    pool = pool_for(get_backend("triton-interp"))
    yield pool
    pool.close()


def verify(judge, source: str):
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import verify_candidate

    return verify_candidate(resolve_task("relu"), "triton-interp", {"source": source}, secret="5eed" * 4,
                            pool=judge, scope="small", preset="warn")


@pytest.mark.parametrize("mode, check", [("thread", "no_threads"), ("fork", "no_threads"), ("keep", "no_subprocess"),
                                         ("hidden", "no_threads_left")])
def test_compute_outside_the_calling_thread_is_seen_from_outside(judge, mode, check):
    source = (CASE / "no_kernel.py").read_text().replace('MODE = "thread"', f"MODE = {mode!r}")
    ev = verify(judge, source)
    assert (ev.verdict.value, ev.check) == ("rejected", check), (ev.verdict, ev.check, ev.evidence)
    assert "outside the candidate's process" in ev.evidence["message"]


def test_a_correct_verdict_names_the_self_reported_checks(judge):
    ev = verify(judge, (CORPUS / "relu_triton.py").read_text())
    assert ev.verdict.value == "correct", ev.evidence
    reported = ev.evidence["self_reported"]
    assert {"kernel_launched", "kernel_does_work", "no_torch_compute"} <= set(reported["checks"])
    assert any("threads and processes" in x for x in reported["judged_outside"])
    assert any("threads the candidate keeps" in x for x in reported["judged_outside"])


def test_self_reported_checks_follow_the_backend_and_preset():
    from kstrata.sandbox.reported import self_reported
    from kstrata.verify.integrity.registry import preset

    torch_side = self_reported("pytorch", preset("strict"))
    assert "kernel_launched" not in torch_side["checks"] and "no_runtime_patching" in torch_side["checks"]
    assert not any("threads" in x for x in torch_side["judged_outside"])  # pytorch's calls may compile
    off = {**preset("strict"), "no_torch_compute": "off"}
    assert "no_torch_compute" not in self_reported("tvm-llvm", off)["checks"]


def test_no_count_where_it_is_not_kept():
    from kstrata.sandbox.client import CandidateProcess, Churn

    assert Churn.mark(CandidateProcess("pytorch")) is None  # not a checked backend
    assert Churn.mark(CandidateProcess("triton-interp", sandbox=False)) is None


@pytest.mark.parametrize("mark, last, live, host_new, want", [
    (10, 10, 0, 0, 0),          # nothing started
    (10, 13, 1, 3, 2),          # three started, one still alive
    (32700, 20, 0, 400, 32468),  # the IDs wrapped round: the candidate ran the counter up at its load
    (10, 10, 0, 40000, 32468),  # a whole cycle of threads in one call brought the counter back
    (10, 13, 0, None, 3),       # the host's count unknown
])
def test_churned_counts_a_wrap_of_the_ids(mark, last, live, host_new, want):
    from kstrata.sandbox.client import churned

    assert churned(mark, last, live, host_new, cycle=32768 - 300) == want


def test_triton_interp_runs_one_thread_in_every_pool():
    from kstrata.backends.registry import get_backend
    from kstrata.sandbox import sandbox_env

    env = sandbox_env(get_backend("triton-interp"))
    assert all(env[k] == "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")), env
