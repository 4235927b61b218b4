"""Queue round rt78: what a quantization task's prompt tells the model.

- The quant tolerance line stated the int8-code rule and the float metrics
  together for every quant task: fake_quant_per_token (a float32 output "on the
  int8 grid of each row") read as held to int8 codes, quantize_per_channel (an
  int8 output) as judged by cosine/RMSE. Now the line names the output's dtype
  and states the rule the judge applies to it (kstrata.verify.tolerance: the
  integer rule for integer outputs only).
- quantize_per_channel's description sent the model to quantize_per_tensor for
  its tie rule, a task the prompt does not show (rt75's open item).
- fake_quant_per_token's description said "rows stay nonzero", while the draw
  list says hidden near_zero tests set rows to zero (they do: inputs.zero_slices);
  the reference gives NaN there, so those rows are not judged.
"""

from __future__ import annotations

import re

import torch

from kstrata.agents.prompt import TaskContract
from kstrata.tasks.inputs import zero_slices
from kstrata.tasks.loader import resolve_task, suite
from kstrata.tasks.signature import output_dtypes

INTEGER_RULE = "except one quantization step only where"


def test_float_output_quant_task_is_told_the_float_metrics_only():
    text = TaskContract.from_task(resolve_task("fake_quant_per_token")).tolerance
    assert text.startswith("the output is float32")
    assert "cosine similarity >= 0.999" in text
    assert INTEGER_RULE not in text and "int8 codes" not in text


def test_int8_output_quant_task_is_told_the_integer_rule_only():
    text = TaskContract.from_task(resolve_task("quantize_per_channel")).tolerance
    assert text.startswith("the output is int8 (integer codes)")
    assert INTEGER_RULE in text and "round half to even" in text
    assert "cosine similarity" not in text


def test_output_dtypes_reads_the_reference_on_meta():
    task = resolve_task("quantize_per_tensor")
    assert output_dtypes(task, dict(task.small_shapes[0])) == ["int8"]


def test_no_description_sends_the_model_to_a_task_it_cannot_see():
    tasks = suite()
    names = {t.name for t in tasks}
    pointers = [(t.name, m) for t in tasks for m in re.findall(r"\bsee ([A-Za-z0-9_]+)", t.description)
                if m in names and m != t.name]
    assert pointers == []
    desc = resolve_task("quantize_per_channel").description
    assert "half to even" in desc and "one step" in desc


def test_fake_quant_description_agrees_with_the_zero_rows_of_hidden_tests():
    task = resolve_task("fake_quant_per_token")
    assert "near_zero" in task.meta.distributions
    assert "stay nonzero" not in task.description and "not judged" in task.description
    # what the description says of those rows: hidden near_zero tests zero some rows, the reference is NaN there
    module = task.load_module({"T": 16, "D": 8})
    (x,) = zero_slices([torch.randn(16, 8) * 1e-3], seed=3)
    zero = (x == 0).all(dim=1)
    assert zero.any()
    y = module.Model()(x)
    assert torch.isnan(y[zero]).all() and torch.isfinite(y[~zero]).all()
