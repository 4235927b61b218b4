"""Red-team round 4 on the verifier/sandbox boundary: the open items of round
3 and new hostile candidates of the known kinds, end to end through ``kstrata
eval`` (run in this process with the session's judge pools: ``conftest.py``).
Each case folder's expected.txt says what was done and why it might have
passed.

Each row: case folder, task (a suite name or a file in the folder), candidate
file, backend, extra ``kstrata eval`` arguments, the verdicts allowed and, for
a rejection, the check that must have fired."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not status().usable, reason="no sandbox here")]

SMALL = ("--no-time", "--scope", "small")
ROWS = [
    # PyTorch in the calling thread with the dispatch record switched off (round 3 open item 1)
    ("rt4_dispatch_switched_off", "relu", "candidate.py", "triton-interp", SMALL, ("rejected",), "no_private_api"),
    ("rt4_dispatch_switched_off", "relu", "candidate.py", "triton-interp", SMALL + ("--preset", "warn"),
     ("rejected",), "no_private_api"),
    ("rt4_dispatch_switched_off", "relu", "candidate_computed.py", "triton-interp", SMALL + ("--preset", "warn"),
     ("rejected",), "no_torch_compute"),
    ("rt4_dispatch_switched_off", "relu", "candidate_aliases.py", "triton-interp", SMALL + ("--preset", "warn"),
     ("rejected",), "no_private_api"),
    # the work done element by element in Python with allowed operators, behind a canary kernel
    ("rt4_python_loop_no_kernel", "relu", "candidate.py", "triton-interp", SMALL, ("rejected",), "no_torch_compute"),
    # PyTorch in a joined thread on tilelang-c (round 3 open item 2: the judge-side counts covered
    # triton-interp and tvm-llvm only); the control compiles its kernel inside its first calls
    ("rt4_tilelang_thread", "relu", "candidate.py", "tilelang-c", SMALL + ("--preset", "warn"), ("rejected",),
     "no_threads"),
    ("rt4_tilelang_thread", "relu", "honest.py", "tilelang-c", SMALL, ("correct",), None),
    # the kernel in checked calls, PyTorch in timed calls, told apart by a poisoned allocation's value
    ("rt4_timed_calls_less_work", "task.py", "candidate.py", "tilelang-c", ("--budget-ms", "100"),
     ("rejected",), "kernel_launched"),
]


@pytest.mark.parametrize("case,task,candidate,backend,args,verdicts,check", ROWS,
                         ids=[f"{r[0]}/{r[2].removesuffix('.py')}/{'-'.join(a for a in r[4] if a.isalpha())}"
                              for r in ROWS])
def test_case(check_case, case, task, candidate, backend, args, verdicts, check):
    check_case(case, task, candidate, backend, args, verdicts, check)
