"""The verifier red-team cases (``../shared/cases/verify``) end to end: each
case's candidate through ``kstrata eval`` (the judge, its sandboxed candidate
process and, where the case is about timing, the judge's timing), asserting
what the case's ``expected.txt`` says. Copies of the case files live under
``tests/verify/cases/``. The CLI runs in this process with the session's judge
pools (``conftest.py``).

Unit-level tests of the same cases live elsewhere and are not repeated here:
``test_plan_domain`` (02, 22: plan and domain), ``test_weak_match`` (01, 18:
weak matching), ``tests/bench/test_fast_interval.py`` and
``tests/bench/test_overhead.py`` (03, 05: metrics; case 03's own check script
runs here, on this module's ``kstrata eval`` output).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.sandbox import status

CASES = Path(__file__).resolve().parent / "cases"

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def summary(d: dict) -> str:
    return (f"{d['verdict']} {d.get('check')}: {str(d.get('evidence', {}).get('message'))[:400]} "
            f"timing={json.dumps(d.get('timing'))[:600]}")


def speedup(d: dict) -> float | None:
    t = d.get("timing") or {}
    return t.get("speedup")


def plain_correct_with_speedup(d: dict) -> bool:
    """Correct, timed, a speedup > 1 reported, nothing marking it weak or doubtful."""
    t = d.get("timing") or {}
    flagged = bool(t.get("suspicious")) or "weak_match" in (d.get("evidence") or {}) or bool(d.get("warnings"))
    return d["verdict"] == "correct" and (speedup(d) or 0) > 1.0 and not flagged


# -- 01: zeros under atol ----------------------------------------------------------------------------
def test_case01_zeros_incorrect_or_rejected(kstrata_eval):
    d = kstrata_eval("01_zeros_under_atol/task.py", "01_zeros_under_atol/candidate.py", "--no-time")
    assert d["verdict"] in ("incorrect", "rejected"), summary(d)


def test_case01_narrow_task_flagged_weak(kstrata_cli):
    p = kstrata_cli("tasks", "check", "01_zeros_under_atol/task_narrow.py")
    assert p.exit_code == 1 and "WEAK" in p.stdout, p.stdout[-2000:]


def test_case01_constant_on_narrow_task_not_plain_correct_with_speedup(kstrata_eval):
    d = kstrata_eval("01_zeros_under_atol/task_narrow.py", "01_zeros_under_atol/candidate_constant.py",
                     "--scope", "small", "--budget-ms", "100")
    assert not plain_correct_with_speedup(d), summary(d)
    assert d["verdict"] != "correct" or "weak_match" in d["evidence"], summary(d)


# -- 02: partial reduction at scale --------------------------------------------------------------------
def test_case02_partial_reduction_incorrect_at_the_large_shape(kstrata_eval):
    d = kstrata_eval("02_partial_reduction_at_scale/task.py", "02_partial_reduction_at_scale/candidate.py",
                     "--no-time")
    assert d["verdict"] == "incorrect", summary(d)


# -- 03: a tie is not faster -----------------------------------------------------------------------------
@pytest.mark.slow
def test_case03_unchanged_gelu_is_a_tie(kstrata_eval, tmp_path):
    from kstrata.bench.metrics import TaskOutcome

    d = kstrata_eval("gelu", "03_tie_counted_as_faster/candidate.py", "--scope", "small", "--budget-ms", "300")
    assert d["verdict"] == "correct", summary(d)
    t = d["timing"]
    lo, hi = t["speedup_ci"]
    contended = [s for s in t["suspicious"] if s.startswith("contended:")]
    # the same code on both sides: a tie, its interval around 1.0, unless the judge itself says that
    # other processes competed for the CPUs while it timed (the tests run in several processes on 2
    # cores). Before both processes' malloc was put in one regime, this read 2.2x or 0.43x on a quiet
    # machine in half the runs (benchmarks/results/malloc_regime.txt).
    if not contended and os.getloadavg()[0] <= (os.cpu_count() or 1):
        assert 0.8 < t["speedup"] < 1.25 and lo <= 1.0 <= hi, summary(d)
    if contended:  # and then it is not counted as faster, whatever it read
        from kstrata.bench.metrics import excluded_reason

        assert excluded_reason({}, t) is not None
    outcome = TaskOutcome(task="gelu", correct=True, speedup=t["speedup"], speedup_ci=(lo, hi))
    assert outcome.fast(1.0) == (lo > 1.0)  # never on the point estimate
    # the case's own script feeds kstrata's fast_p rule the point estimate alone: with no interval, a
    # speedup is not demonstrated, whatever it reads
    out = tmp_path / "kstrata_output.txt"
    out.write_text(json.dumps(d) + "\n")
    checked = subprocess.run([sys.executable, str(CASES / "03_tie_counted_as_faster" / "check_fast1.py"), str(out)],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stderr
    assert "fast_1 = False" in checked.stdout and "fast_1 = True" not in checked.stdout, checked.stdout


# -- 05: tiny tensor timing ------------------------------------------------------------------------------
def test_case05_tiny_call_correct_and_timing_marked_overhead(kstrata_eval):
    d = kstrata_eval("05_tiny_tensor_timing/task.py", "05_tiny_tensor_timing/candidate.py", "--budget-ms", "100")
    assert d["verdict"] == "correct", summary(d)
    t = d["timing"] or {}
    notes = " ".join(map(str, t.get("suspicious") or [])).lower()
    assert "overhead" in notes or speedup(d) is None, summary(d)


# -- 09: timer patch -----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_case09_patched_clock_gives_no_speedup(kstrata_eval):
    d = kstrata_eval("relu", "09_timer_patch/candidate.py", "--scope", "small", "--budget-ms", "200")
    assert d["verdict"] in ("rejected", "correct"), summary(d)
    if d["verdict"] == "correct":
        assert speedup(d) is None or speedup(d) <= 1.2, summary(d)


# -- 10: verified shape is not the timed shape -------------------------------------------------------------
@pytest.mark.slow
def test_case10_wrong_at_the_timed_shape_is_incorrect(kstrata_eval):
    d = kstrata_eval("softmax", "10_verified_not_timed_shape/candidate.py", "--scope", "small",
                     "--budget-ms", "100")
    assert d["verdict"] == "incorrect", summary(d)
    assert speedup(d) is None


# -- 11: value-keyed memo --------------------------------------------------------------------------------------
def test_case11_memo_has_no_large_trusted_speedup(kstrata_eval):
    d = kstrata_eval("11_value_keyed_memo/task.py", "11_value_keyed_memo/candidate.py", "--budget-ms", "200")
    if d["verdict"] == "correct":
        t = d["timing"] or {}
        assert t.get("suspicious") or (speedup(d) or 0) < 1.5, summary(d)
    else:
        assert d["verdict"] in ("rejected", "incorrect"), summary(d)


# -- 17: no TileLang kernel -------------------------------------------------------------------------------------
def test_case17_tilelang_without_a_kernel_is_rejected(kstrata_eval):
    from kstrata.backends.registry import get_backend

    if not get_backend("tilelang-c").availability().usable:
        pytest.skip("tilelang-c is not set up here (kstrata setup)")
    d = kstrata_eval("relu", "17_no_kernel_tilelang/candidate.py", "--no-time", "--scope", "small",
                     backend="tilelang-c")
    assert d["verdict"] == "rejected", summary(d)
    # the static check (.numpy in host code) or the run-time ones: work done outside the DSL
    assert d["check"] in ("kernel_launched", "no_torch_compute", "kernel_does_work",
                          "no_foreign_libraries"), summary(d)


# -- 18: zero-init weights ----------------------------------------------------------------------------------------
def test_case18_task_flagged_weak(kstrata_cli):
    p = kstrata_cli("tasks", "check", "18_zero_init_weights/task.py")
    assert p.exit_code == 1 and "WEAK" in p.stdout, p.stdout[-2000:]


def test_case18_no_op_not_plain_correct_with_speedup(kstrata_eval):
    d = kstrata_eval("18_zero_init_weights/task.py", "18_zero_init_weights/candidate.py", "--budget-ms", "100")
    assert not plain_correct_with_speedup(d), summary(d)
    assert d["verdict"] != "correct" or "weak_match" in d["evidence"], summary(d)


# -- 19: lazy output ---------------------------------------------------------------------------------------------------
def test_case19_deferred_output_rejected_or_incorrect(kstrata_eval):
    d = kstrata_eval("19_lazy_output_deferred/task_matmul.py", "19_lazy_output_deferred/candidate_matmul.py",
                     "--budget-ms", "100")
    assert d["verdict"] in ("rejected", "incorrect"), summary(d)


# -- 21: uninitialized rfactor partials (tvm-llvm) ------------------------------------------------------------------
@pytest.mark.slow
def test_case21_uninitialized_partials_incorrect_every_time():
    """Incorrect under the run's own secret and two others, through one judge pool."""
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for
    from kstrata.serve.service import evaluate
    from kstrata.tasks.loader import resolve_task

    here = CASES / "21_uninitialized_partials_tvm"
    b = get_backend("tvm-llvm")
    src = {"graph": (here / "graph.py").read_text(), "schedule": (here / "schedule.py").read_text()}
    pool = pool_for(b)
    try:
        for secret in ((here / "run1_secret.txt").read_text().strip(), "0" * 64, "5eed" * 16):
            out = evaluate(resolve_task("layernorm"), b, src, secret=secret, pool=pool, time_it=False)
            assert out.public.get("verdict") == "incorrect", (secret[:8], out.public)
    finally:
        pool.close()


# -- 22: overflow outside the fp32 domain ----------------------------------------------------------------------------
def test_case22_overflow_in_the_reference_too_is_correct(kstrata_eval):
    d = kstrata_eval("22_overflow_domain_false_reject/task.py", "22_overflow_domain_false_reject/candidate.py",
                     "--no-time")
    assert d["verdict"] == "correct", summary(d)


# -- 24: reads and writes past the end of an input (kstrata's own case, from a CI flake) ------------------------------
def test_case24_read_past_the_end_is_incorrect_and_located(kstrata_eval):
    d = kstrata_eval("softmax", "24_past_the_end/candidate_read.py", "--no-time")
    assert d["verdict"] == "incorrect", summary(d)
    assert d["evidence"]["stats"]["nonfinite_wrong"] > 0, summary(d)
    assert "NaN/Inf where the oracle is finite" in d["message"] and "max error" not in d["message"]
    kinds = {f["kind"]: f for f in d["feedback"]}
    assert "last row only" in kinds["edge_read"]["text"], d["feedback"]


def test_case24_write_past_the_end_is_not_correct(kstrata_eval):
    d = kstrata_eval("softmax", "24_past_the_end/candidate_write.py", "--no-time")
    assert d["verdict"] in ("rejected", "incorrect"), summary(d)
    assert d["check"] == "inputs_unchanged" and "outside its bounds" in d["message"], summary(d)


# -- 25: an output that aliases an input, as the reference's does at that shape -------------------------------------
def test_case25_alias_where_the_reference_aliases_is_correct(kstrata_eval):
    d = kstrata_eval("transpose", "25_alias_like_the_reference/candidate_contiguous.py", "--no-time",
                     "--scope", "small")
    assert d["verdict"] == "correct", summary(d)


def test_case25_alias_where_the_reference_copies_is_rejected(kstrata_eval):
    d = kstrata_eval("transpose", "25_alias_like_the_reference/candidate_view.py", "--no-time", "--scope", "small")
    assert d["verdict"] == "rejected" and d["check"] == "no_output_alias", summary(d)
