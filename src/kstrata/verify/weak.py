"""Weak-test guard: would an all-zero, constant or input-independent output
pass a task's checks? If so its test inputs are too weak (KernelBench accepted
all-zero outputs on 4 of 60 level-1 problems)."""

from __future__ import annotations

import copy

import torch

from kstrata.tasks.base import Task
from kstrata.tasks.inputs import apply_distribution
from kstrata.verify.plan import hidden_tests, public_tests
from kstrata.verify.runner import flatten
from kstrata.verify.tolerance import compare

FAKES = ("zeros", "constant", "other_seed")


def weak_fakes(task: Task, secret: str = "weak-test-guard", scope: str = "small") -> list[str]:
    """Names of fake outputs (:data:`FAKES`) that pass *every* test of ``task``.

    ``zeros``: all-zero output; ``constant``: the oracle's mean everywhere;
    ``other_seed``: the correct output for another seed's inputs (an
    input-independent answer). An empty list means the tests are strong.
    """
    base = task.small_shapes if scope == "small" else task.sweep_shapes
    tests = public_tests(task) + hidden_tests(task, secret, base=base)
    passing = {f: True for f in FAKES}
    tol = task.meta.tolerance
    prev: dict[tuple, list[torch.Tensor]] = {}
    groups: dict[tuple, tuple] = {}
    for t in tests:
        key = (t.shape, t.param_seed)
        if key not in groups:
            model, _, _, module = task.instantiate(t.shape_dict, t.param_seed)
            groups = {key: (model, copy.deepcopy(model).double(), module)}
        model, model64, module = groups[key]
        torch.manual_seed(t.seed + 1)
        xs = apply_distribution(list(module.get_inputs()), t.dist, t.seed, task.meta.dist_inputs)
        with torch.no_grad():
            refs = flatten(model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in xs]))
            oracles = flatten(model64(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point()
                                        else x for x in xs]))
        fakes = {
            "zeros": [torch.zeros_like(r) for r in refs],
            "constant": [torch.full_like(r, float(o.double().mean()) if r.is_floating_point() else 0)
                         for r, o in zip(refs, oracles)],
        }
        if t.shape in prev:
            fakes["other_seed"] = prev[t.shape]
        prev[t.shape] = [r.clone() for r in refs]
        for name, outs in fakes.items():
            if passing[name] and not all(compare(f, o if r.is_floating_point() else r, r, tol).ok
                                         for f, o, r in zip(outs, oracles, refs)):
                passing[name] = False
        if not any(passing.values()):
            break
    return [f for f, ok in passing.items() if ok]
