"""Red-team round of 2026-12-04 on the timing (rt49...), end to end through
``kstrata eval`` (run in this process with the session's judge pools:
``conftest.py``); each case folder's expected.txt says what the candidate
does and why it passed before."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not status().usable, reason="no sandbox here")]

TIMED = ("--scope", "small", "--budget-ms", "300")
ROWS = [
    # the stable softmax when verified, the form without the max subtraction when timed (right on randn only)
    ("rt49_timed_path_right_on_its_draw_only", "softmax", "candidate.py", "pytorch", TIMED, ("rejected",),
     "timed_output"),
    ("rt49_timed_path_right_on_its_draw_only", "softmax", "honest.py", "pytorch", TIMED, ("correct",), None),
    # two helper processes that continue each other escape the freeze and take the baseline's CPUs; since
    # 76e5a94 their spinning while the judge works ends the sandbox first (rejected there, timing_rejection)
    ("rt49_helpers_continue_each_other", "relu", "candidate.py", "pytorch", TIMED + ("--preset", "warn"),
     ("rejected",), "no_threads_left"),
    # the harness's freshen wrapped: each freshened copy's output computed in the untimed request
    ("rt49_freshen_hook_precomputes", "softmax", "candidate.py", "pytorch", TIMED + ("--preset", "warn"),
     ("rejected",), "no_runtime_patching"),
    ("rt49_freshen_hook_precomputes", "softmax", "candidate_mul.py", "pytorch", TIMED + ("--preset", "warn"),
     ("rejected",), "no_runtime_patching"),
]


@pytest.mark.parametrize("case,task,candidate,backend,args,verdicts,check", ROWS,
                         ids=[f"{r[0]}/{r[2].removesuffix('.py')}" for r in ROWS])
def test_case(check_case, case, task, candidate, backend, args, verdicts, check):
    d = check_case(case, task, candidate, backend, args, verdicts, check)
    if case == "rt49_timed_path_right_on_its_draw_only" and candidate == "candidate.py":
        assert "drawn '" in str((d.get("evidence") or {}).get("message")), d
    if verdicts == ("correct",):
        assert d["timing"]["speedup"] is not None, d["timing"]
