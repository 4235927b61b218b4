"""Red-team round rt58 (2026-12-05). Case folders ``cases/rt58_*`` (each ``expected.txt`` says what
it did before and why)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")

INT = "rt58_int_param_written_in/"


@needs_sandbox
@pytest.mark.parametrize("task,name,verdict,backend", [
    ("dequantize_per_tensor", "dequantize_zero_point_written_in.py", "incorrect", "pytorch"),
    (INT + "task_dequantize_python_int_zero_point.py", "dequantize_python_int_written_in.py", "incorrect", "pytorch"),
    (INT + "task_dequantize_python_int_zero_point.py", "dequantize_python_int_honest.py", "correct", "pytorch"),
    (INT + "task_dequantize_per_channel_one_zero_point.py", "dequantize_per_channel_written_in.py", "incorrect",
     "pytorch"),
    (INT + "task_fake_quant_float_zero_point.py", "fake_quant_zero_point_ignored.py", "incorrect", "pytorch"),
    (INT + "task_quantize_zero_point.py", "quantize_zero_point_written_in_triton.py", "incorrect", "triton-interp"),
    (INT + "task_quantize_zero_point.py", "quantize_zero_point_honest_triton.py", "correct", "triton-interp"),
])
def test_rt58_a_zero_point_written_into_the_kernel_is_incorrect(kstrata_eval, task, name, verdict, backend):
    # the zero point had the task's value in every test (no draw moved an integer input): correct before
    d = kstrata_eval(task, INT + name, "--scope", "small", "--no-time", backend=backend)
    assert d["verdict"] == verdict, f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"
    if verdict == "incorrect":  # the agent, who sees the public tests only, is told why such a kernel fails there
        said = " ".join(f["text"] for f in d["feedback"] if f["kind"] == "hidden_failure")
        assert "never write their value in" in said and "zero_point" in said, said


@needs_sandbox
@pytest.mark.parametrize("name,verdict", [("column_index_honest.py", "correct"),
                                          ("column_index_from_the_shape.py", "incorrect")])
def test_rt58_an_index_is_moved_where_the_reference_takes_it(kstrata_eval, name, verdict):
    # full scope: at D = 3 the moved index is past the end; that test keeps the task's value (the honest candidate
    # ended in a VerifierError, IndexError, when every hidden test moved it)
    d = kstrata_eval(INT + "task_column_index.py", INT + name, "--no-time")
    assert d["verdict"] == verdict, f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"


def _task(tmp_path, body: str, meta: str = ""):
    from kstrata.tasks.loader import resolve_task

    p = tmp_path / "task_ints.py"
    p.write_text("import torch\nimport torch.nn as nn\n"
                 f"KSTRATA = {{'shapes': {{'nominal': {{'B': 6, 'D': 5}}, 'small': [{{'B': 6, 'D': 5}}]}}{meta}}}\n"
                 "B = 6\nD = 5\n" + body + "\ndef get_init_inputs():\n    return []\n")
    return resolve_task(str(p))


def test_rt58_only_integers_the_reference_reads_as_values_are_moved(tmp_path):
    from kstrata.verify.free_ints import free_int_inputs

    # 1: a zero point (moved); 2: a row index that may leave the rows (an error for the reference: not moved);
    # 3: a dim (a Python int, not named as a zero point: not moved); 4: a shift (a Python int: moved where declared
    # free); 5: an int read by nothing (not moved)
    body = ("class Model(nn.Module):\n"
            "    def forward(self, x, zp, row, dim, shift, unused):\n"
            "        return torch.softmax(x, dim=dim) - zp + x[row].sum() + shift\n"
            "def get_inputs():\n"
            "    return [torch.randn(B, D), torch.tensor([3]), torch.tensor(B - 1), -1, 2, torch.tensor(7)]\n")
    assert free_int_inputs(_task(tmp_path, body)) == (1,)
    assert free_int_inputs(_task(tmp_path, body, ", 'free_inputs': [4]")) == (1, 4)  # declared free
    assert free_int_inputs(_task(tmp_path, body, ", 'free_inputs': [3]")) == (1,)  # a dim moved leaves the dims
    assert free_int_inputs(_task(tmp_path, body, ", 'fixed_inputs': [1]")) == ()
    # a Python int named as a zero point ('z', as the suite's descriptions write it) is a candidate undeclared
    named = ("class Model(nn.Module):\n"
             "    def forward(self, q, s, z):\n"
             "        return (q.to(torch.int32) - z).float() * s\n"
             "def get_inputs():\n"
             "    return [torch.randint(-128, 128, (B, D), dtype=torch.int8), torch.tensor([0.02]), 3]\n")
    assert free_int_inputs(_task(tmp_path, named)) == (2,)


def test_rt58_hidden_draws_move_the_free_integers_only():
    from kstrata.tasks.inputs import draw_inputs, move_int

    def get_inputs():
        return [torch.randn(4, 8), torch.tensor([3], dtype=torch.int32), torch.full((4,), 5, dtype=torch.int8),
                torch.zeros(4, dtype=torch.int64), 128, torch.tensor([0.5])]

    public, _ = draw_inputs(get_inputs, 3, "uniform", [0], ints=(1, 2, 3, 4))
    assert public[1].item() == 3 and public[4] == 128  # public tests keep the task's values
    seen = set()
    for seed in range(12):
        h, _ = draw_inputs(get_inputs, seed, "uniform", [0], vary_scalar_inputs=True, ints=(1, 2, 3, 4), fixed=(5,))
        assert h[1].dtype == torch.int32 and h[1].shape == (1,) and 2 <= h[1].item() <= 6 and h[1].item() != 3
        assert h[2].dtype == torch.int8 and bool((h[2] == h[2][0]).all()) and h[2][0].item() != 5
        assert torch.equal(h[3], torch.zeros(4, dtype=torch.int64))  # all zeros: a mask or labels, never moved
        assert 64 <= h[4] <= 256 and h[4] != 128 and h[5].item() == 0.5  # fixed: the float stays too
        seen.add(h[1].item())
    assert len(seen) >= 3
    assert move_int(torch.tensor([127], dtype=torch.int8), 1.0).item() in range(-128, 127)  # within the dtype
    assert move_int(0, 0.0) == 1 and move_int(-1, 1.0) == -4 and move_int(True, 0.5) is True
    # a float that is exactly zero (no scaling moves it): by 1 to 3 as an integer zero; other floats are scaled
    assert move_int(0.0, 1.0) == 3.0 and move_int(torch.tensor([0.0]), 0.0).tolist() == [1.0]
    assert move_int(torch.tensor([0.5]), 0.0).item() == 0.5 and move_int(torch.zeros(3), 0.0).tolist() == [0.0] * 3


def test_rt58_fixed_and_free_inputs_are_task_metadata():
    from pydantic import ValidationError

    from kstrata.tasks.meta import TaskMeta

    m = TaskMeta(free_inputs=[2], fixed_inputs=[1])
    assert m.free_inputs == (2,) and m.fixed_inputs == (1,)
    with pytest.raises(ValidationError):
        TaskMeta(free_input=[2])



ID = "rt58_identity_weights_1d/"


@needs_sandbox
@pytest.mark.parametrize("name", ["returns_input.py", "affine_honest.py"])
def test_rt58_one_dimensional_identity_weights_make_the_task_weak(kstrata_eval, name):
    # x * ones + zeros: a candidate returning x read correct, ranked 1.2x faster, and tasks check said ok
    d = kstrata_eval(ID + "task_affine_ones_zeros.py", ID + name, "--scope", "small", "--no-time")
    assert d["verdict"] == "correct" and (d.get("evidence") or {}).get("weak_match") == "input", d.get("evidence")


def test_rt58_the_input_fake_passes_an_identity_task_only():
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.weak import weak_fakes, weak_match

    cases = Path(__file__).parent / "cases"
    assert "input" in weak_fakes(resolve_task(str(cases / ID / "task_affine_ones_zeros.py")))
    task = resolve_task("relu")
    assert "input" not in weak_fakes(task)
    x = torch.randn(4, 8)
    tol = task.meta.tolerance
    assert weak_match(["input"], [x.clone()], [x], tol, inputs=[x]) == "input"
    assert weak_match(["input"], [x.relu()], [x.relu()], tol, inputs=[x]) is None
    assert weak_match(["input"], [x.clone()], [x], tol, inputs=[x.t().contiguous().t()]) is None  # a strided one


ZERO = "rt58_zero_oracle_scale/"


@needs_sandbox
@pytest.mark.parametrize("name,verdict", [("logsigmoid_stable.py", "correct"), ("logsigmoid_off.py", "incorrect")])
def test_rt58_an_all_zero_oracle_does_not_reject_a_tiny_true_value(kstrata_eval, name, verdict):
    # a one-element test whose reference and oracle are both exactly 0 (1 + exp(-83) rounds to 1): atol was 0
    d = kstrata_eval(ZERO + "task_logsigmoid_naive.py", ZERO + name, "--scope", "small", "--no-time")
    assert d["verdict"] == verdict, f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"


def test_rt58_the_atol_scale_of_an_all_zero_oracle_is_one():
    from kstrata.tasks.meta import Tolerance
    from kstrata.verify.tolerance import compare, output_scale

    zero = torch.zeros(1, dtype=torch.float64)
    assert output_scale(zero) == 1.0 and output_scale(torch.tensor([0.0, 2e-3], dtype=torch.float64)) == 2e-3
    cand = torch.tensor([-7.93e-37])
    assert compare(cand, zero, zero.float(), Tolerance()).ok
    assert not compare(torch.tensor([2e-5]), zero, zero.float(), Tolerance()).ok  # the float32 atol, 1e-5
