"""Red-team round rt50 on the timing: what a candidate leaves in its process that
the harness's own torch calls then run through, with no watched name replaced
(case folder rt50_harness_calls_intercepted; its expected.txt says what each
candidate does and why it passed before)."""

from __future__ import annotations

import sys

import pytest
import torch

from kstrata.sandbox import status
from kstrata.verify.integrity.watch import RuntimeWatch

CASE = "rt50_harness_calls_intercepted"
TIMED = ("--scope", "small", "--budget-ms", "300")
ROWS = [
    # the harness's untimed freshen (mul_) runs through a function mode left entered / a kernel registered again
    (CASE, "softmax", "function_mode.py", "pytorch", TIMED, ("rejected",), "the torch function mode stack"),
    (CASE, "softmax", "library_kernel.py", "pytorch", TIMED, ("rejected",), "aten::mul_.Tensor"),
    # the harness's thread runs a signal handler between requests, sent by a helper every 0.2 ms
    (CASE, "softmax", "signal_handler.py", "pytorch", TIMED + ("--preset", "warn"), ("rejected",),
     "the handler of signal"),
]


@pytest.mark.slow
@pytest.mark.skipif(not status().usable, reason="no sandbox here")
@pytest.mark.parametrize("case,task,candidate,backend,args,verdicts,check", ROWS,
                         ids=[r[2].removesuffix(".py") for r in ROWS])
def test_case(check_case, case, task, candidate, backend, args, verdicts, check):
    d = check_case(case, task, candidate, backend, args, verdicts, check)
    assert d.get("check") == "no_runtime_patching", d


def _armed() -> RuntimeWatch:
    w = RuntimeWatch()
    w.arm(None, skip=("kstrata.verify", "kstrata.tasks.inputs"))
    assert w.changed() == []
    return w


def test_a_function_mode_left_entered_is_seen():
    w = _armed()

    def held():
        with torch.overrides.TorchFunctionMode():
            yield

    gen = held()
    next(gen)
    try:
        assert w.changed() == ["the torch function mode stack (1 mode(s) left entered)"]
    finally:
        gen.close()
    assert w.changed() == []


def test_a_kernel_registered_again_is_seen_a_new_operator_is_not():
    w = _armed()
    lib = torch.library.Library("kstrata_rt50", "DEF")  # the candidate's own operator: allowed
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    assert w.changed() == []
    again = torch.library.Library("aten", "IMPL")
    again.impl("div_.Tensor", lambda a, b: a, "CPU")
    assert w.changed() == ["the kernel of aten::div_.Tensor (CPU) (torch.library)"]
    del again


def test_a_timer_and_a_collector_callback_are_seen_and_undone():
    import gc
    import signal

    w = _armed()
    signal.setitimer(signal.ITIMER_VIRTUAL, 1000.0)
    gc.callbacks.append(lambda *a: None)
    try:
        assert w.changed() == ["an interval timer (signal.setitimer)",
                               "the garbage collector's callbacks (gc.callbacks)"]
        w.restore()
        assert w.changed() == []
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def test_a_profile_function_is_seen():
    w = _armed()
    sys.setprofile(lambda *a: None)
    try:
        assert w.changed() == ["the profile function (sys.setprofile)"]
    finally:
        sys.setprofile(None)
