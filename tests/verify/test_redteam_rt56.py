"""Red-team round rt56 (2026-12-05). Case folders ``cases/rt56_*`` (each ``expected.txt`` says what
it did before and why)."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")


@needs_sandbox
@pytest.mark.parametrize("task,name", [("relu", "relu_inference_mode.py"),
                                       ("softmax", "softmax_inference_mode_two_outputs.py")])
def test_rt56_an_honest_forward_under_inference_mode_is_correct(kstrata_eval, task, name):
    # its outputs are inference tensors, which the harness's NaN poisoning between calls could not write
    # (runtime_error, "candidate raised RuntimeError: Inplace update to inference tensor ...")
    d = kstrata_eval(task, "rt56_inference_mode_output/" + name, "--scope", "small", "--no-time")
    assert d["verdict"] == "correct", f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"
