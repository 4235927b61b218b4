"""Weak tasks: a candidate that is a passing fake gets a weak verdict and
strengthening draws are found where they exist (issue #17 item 6; cases 01, 18)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from kstrata.tasks.base import import_module_from_path
from kstrata.tasks.loader import load_task, resolve_task
from kstrata.verify.tolerance import DTYPE_BOUNDS, compare
from kstrata.verify.weak import (CONSTANT_WEIGHTS, constant_weights, fakes_under_dtype_atol, strengthening_draws,
                                 weak_fakes, weak_match)

CASES = Path(__file__).resolve().parent / "cases"


def _outputs(task, cand_file, seed):
    model, inputs, init, module = task.instantiate(task.small_shapes[0], 0)
    torch.manual_seed(seed)
    xs = list(module.get_inputs())
    cand = import_module_from_path(cand_file).ModelNew(*init)
    with torch.no_grad():
        return [cand(*xs)], [model(*xs)]


def test_case01_constant_candidate_on_narrow_task_is_weak():
    # every output of the narrow task (softmax over 262144 columns) is far below fp32's atol: under a
    # fixed atol the row mean everywhere passes, so `tasks check` flags the task; kstrata's own
    # comparison scales atol to the outputs and rejects the fake, so the judge has no fake to match
    task = load_task(CASES / "01_zeros_under_atol" / "task_narrow.py")
    assert weak_fakes(task) == []
    assert "constant" in fakes_under_dtype_atol(task)
    outs, refs = _outputs(task, CASES / "01_zeros_under_atol" / "candidate_constant.py", 1)
    assert not all(compare(o, r.double(), r, task.meta.tolerance).ok for o, r in zip(outs, refs))
    # under the fixed atol, 'large' inputs make softmax rows peaked: zeros and constants fail there
    fixed = task.meta.tolerance.model_copy(update={"atol": DTYPE_BOUNDS[torch.float32][0]})
    trial = dataclasses.replace(task, meta=task.meta.model_copy(update={"tolerance": fixed}))
    fakes = weak_fakes(trial)  # deterministic (a fixed secret and seeds): computed once, ~10% of this test
    assert "constant" in fakes
    assert weak_match(fakes, outs, refs, fixed) in ("zeros", "constant")
    assert {"large", "heavy_tailed"} & set(strengthening_draws(trial))


def test_case18_zero_weights_no_op_is_weak_and_cannot_be_strengthened():
    task = load_task(CASES / "18_zero_init_weights" / "task.py")
    fakes = weak_fakes(task)
    assert {"zeros", "constant", "other_seed"} <= set(fakes)
    outs, refs = _outputs(task, CASES / "18_zero_init_weights" / "candidate.py", 1)
    assert weak_match(fakes, outs, refs, task.meta.tolerance) == "zeros"
    prev, _ = _outputs(task, CASES / "18_zero_init_weights" / "candidate.py", 2)
    assert weak_match(["other_seed"], outs, refs, task.meta.tolerance, prev) == "other_seed"
    assert strengthening_draws(task) == []


def test_strong_task_never_matches():
    task = resolve_task("softmax")
    assert weak_fakes(task) == []
    z = [torch.zeros(4, 7)]
    assert weak_match([], z, z, task.meta.tolerance) is None
    real = [torch.randn(4, 7)]
    assert weak_match(["zeros", "constant"], real, real, task.meta.tolerance) is None


def test_constant_weights_make_a_task_weak_whatever_the_output():
    # red-team round 3: every weight 0.01, so 0.01 * row sum + bias passes for the matrix product (2.3x)
    task = load_task(CASES / "rt3_constant_weights" / "task.py")
    assert constant_weights(task) == ["fc.weight"]
    assert weak_fakes(task) == [CONSTANT_WEIGHTS]  # no output fake passes: the outputs depend on the inputs
    model, inputs, _, _ = task.instantiate(task.small_shapes[0], 0)
    with torch.no_grad():
        ref = model(*inputs)
        shortcut = inputs[0].sum(-1, keepdim=True) * 0.01 + model.fc.bias
    assert torch.allclose(shortcut, ref, atol=1e-5)
    assert weak_match(weak_fakes(task), [shortcut], [ref], task.meta.tolerance) == CONSTANT_WEIGHTS
    # the zero-weight task of case 18 still names the fake its no-op is
    zero = load_task(CASES / "18_zero_init_weights" / "task.py")
    assert constant_weights(zero) == ["fc.weight"]
    for name in ("softmax", "matmul_square", "layernorm"):  # random or one-dimensional weights: strong
        assert constant_weights(resolve_task(name)) == []
