"""Red-team round 3 on the verifier and timing: new variants of the known
kinds, and the open items of round 2, end to end through ``kstrata eval``
(run in this process with the session's judge pools: ``conftest.py``). Each
case folder's expected.txt says what was done and why it might have passed.

Each row: case folder, task (a suite name or a file in the folder), candidate
file, backend, extra ``kstrata eval`` arguments, the verdicts allowed and, for
a rejection, the check that must have fired."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not status().usable, reason="no sandbox here")]

NO_TIME = ("--no-time",)
ROWS = [
    # index outputs among ties (round 2 open item 4): a correct argmax that picks another of equal maxima
    ("rt3_argmax_ties", "task.py", "candidate.py", "pytorch", NO_TIME, ("correct",), None),
    ("rt3_argmax_ties", "task.py", "candidate_wrong.py", "pytorch", NO_TIME, ("incorrect",), None),
    # no kernel in timed calls: the DSL kernel when the harness's checked-call state is on, PyTorch when off
    ("rt3_timed_path_no_kernel", "task.py", "candidate.py", "tilelang-c", NO_TIME,
     ("rejected",), "no_mode_probe"),
    # output buffers kept across timed calls, two in turn (round 2 open item 1): an earlier call's output
    # storage still alive after the harness dropped it
    ("rt3_output_ring", "relu", "candidate.py", "pytorch", ("--budget-ms", "200"), ("rejected",),
     "output_reused"),
    # constant weights (the kind of case 18): a row sum for the matrix product is correct, never ranked
    ("rt3_constant_weights", "task.py", "candidate.py", "pytorch", ("--budget-ms", "100"), ("correct",),
     "weak_task"),
    # a memo on integer inputs (token ids), which the timer's freshen left unchanged (the kind of case 11)
    ("rt3_int_input_memo", "task.py", "candidate.py", "pytorch", ("--budget-ms", "200"), ("rejected",),
     "timed_output"),
    # the same with the fewest timed calls (a loaded machine): fewer calls than input copies reuse no copy,
    # so the memo never hit a freshened one and read correct; a checked call on a freshened copy is now certain
    ("rt3_int_input_memo", "task.py", "candidate.py", "pytorch", ("--budget-ms", "1"), ("rejected",),
     "timed_output"),
    # NaN/Inf propagation (round 2 open item 2): a task that opts in to the nonfinite draw
    ("rt3_nonfinite_relu", "task.py", "candidate.py", "pytorch", NO_TIME, ("correct",), None),
    ("rt3_nonfinite_relu", "task.py", "candidate_where.py", "pytorch", NO_TIME, ("incorrect",), None),
    ("rt3_nonfinite_relu", "task.py", "candidate_mask.py", "pytorch", NO_TIME, ("incorrect",), None),
]


@pytest.mark.parametrize("case,task,candidate,backend,args,verdicts,check", ROWS,
                         ids=[f"{r[0]}/{r[2].removesuffix('.py')}" for r in (getattr(r, "values", r) for r in ROWS)])
def test_case(check_case, case, task, candidate, backend, args, verdicts, check):
    check_case(case, task, candidate, backend, args, verdicts, check)
