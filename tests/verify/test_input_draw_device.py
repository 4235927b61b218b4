"""The judge's input draw through :func:`kstrata.tasks.inputs.draw_inputs`
(issue #18): on the CPU the values are those of the draw before it
(``get_inputs()`` after seeding, then the distribution), and the draw is
deterministic per (seed, shape, distribution) whatever else used torch's
generators in between. The CPU stands in for the GPU path here (the same code
with ``device="cpu"``); tests/verify/test_gpu_verify_speedups.py runs it on CUDA."""

from __future__ import annotations

import pytest
import torch

from kstrata.tasks.inputs import apply_distribution, draw_inputs, seed_all
from kstrata.tasks.meta import DISTRIBUTIONS


def _module(name: str, shape: dict[str, int] | None = None):
    from kstrata.tasks.loader import resolve_task

    task = resolve_task(name)
    _, _, _, module = task.instantiate(shape or dict(task.small_shapes[0]), 0)
    return task, module


def _equal(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Same dtype, shape and values, NaN where the other has NaN."""
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if not x.is_floating_point():
        return torch.equal(x, y)
    return torch.equal(x.isnan(), y.isnan()) and torch.equal(x.nan_to_num(0.0, float("inf"), float("-inf")),
                                                             y.nan_to_num(0.0, float("inf"), float("-inf")))


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(_equal(x, y) if isinstance(x, torch.Tensor) else x == y for x, y in zip(a, b))


@pytest.mark.parametrize("name", ["softmax", "cross_entropy"])
@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_cpu_values_are_the_draw_before(name, dist):
    task, module = _module(name)
    seed_all(8)
    old = apply_distribution(list(module.get_inputs()), dist, 7, task.meta.dist_inputs)
    host, on_device = draw_inputs(module.get_inputs, 7, dist, task.meta.dist_inputs, device="cpu")
    assert on_device is None
    assert _same(host, old)
    none, _ = draw_inputs(module.get_inputs, 7, dist, task.meta.dist_inputs)  # device None: the CPU
    assert _same(none, old)


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_deterministic_per_seed_whatever_ran_between(dist):
    task, module = _module("softmax")
    a, _ = draw_inputs(module.get_inputs, 3, dist, task.meta.dist_inputs, device="cpu")
    torch.randn(1000)  # other users of the global generator
    torch.manual_seed(12345)
    b, _ = draw_inputs(module.get_inputs, 3, dist, task.meta.dist_inputs, device="cpu")
    c, _ = draw_inputs(module.get_inputs, 4, dist, task.meta.dist_inputs, device="cpu")
    assert _same(a, b)
    assert not _same(a, c)


def test_the_judge_draws_through_it():
    """ShapeRun's draw and preflight's (runner._seed_inputs) are draw_inputs' host inputs."""
    from kstrata.verify.plan import public_tests
    from kstrata.verify.runner import _seed_inputs

    task, module = _module("softmax")
    test = public_tests(task)[0]
    _, module = _module("softmax", test.shape_dict)
    got = _seed_inputs(task, "cpu")(module, test)
    want, _ = draw_inputs(module.get_inputs, test.seed, test.dist, task.meta.dist_inputs, device="cpu")
    assert _same(got, want)
