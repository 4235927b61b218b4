"""Hidden octave probes: sizes in the power-of-two ranges no sweep shape
reaches (red-team round of 2026-12-02: a softmax wrong only for rows of two
1024-wide tiles passed every sweep width)."""

from __future__ import annotations

import textwrap

import pytest

from kstrata.tasks.loader import resolve_task
from kstrata.verify.plan import OCTAVE_PROBES, _cost, octave_tests, perturbed_shapes

#: correct except when a row holds exactly two 1024-wide tiles: each tile is normalised on its own
TWO_TILES = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class ModelNew(nn.Module):
        def forward(self, x):
            d = x.shape[-1]
            if 1024 < d <= 2048:
                return torch.cat([torch.softmax(x[..., :1024], -1), torch.softmax(x[..., 1024:], -1)], -1)
            return torch.softmax(x, -1)
''')


def _octave(v: int) -> int:
    return (v - 1).bit_length()


@pytest.mark.parametrize("name", ["softmax", "matmul_square", "layernorm", "conv2d", "cumsum"])
def test_probes_fill_empty_octaves_and_cost_no_more_than_the_sweep(name):
    task = resolve_task(name)
    top = max(_cost(task, s) for s in task.sweep_shapes)
    for k in range(10):
        secret = f"octave-{k}"
        known = perturbed_shapes(task, secret)
        tests = octave_tests(task, secret, task.sweep_shapes, known)
        assert len(tests) <= OCTAVE_PROBES and all(not t.public for t in tests)
        assert octave_tests(task, secret, task.sweep_shapes, known) == tests  # a function of the secret
        for t in tests:
            shape = t.shape_dict
            assert _cost(task, shape) <= top
            moved = [n for n, v in shape.items() if _octave(v) not in {
                _octave(s[n]) for s in [*task.sweep_shapes, *known, *task.small_shapes]}]
            assert len(moved) == 1, shape  # one variable, in an octave nothing else reaches
            assert shape[moved[0]] > 16


def test_the_two_tile_octave_is_probed_for_most_secrets():
    task = resolve_task("softmax")
    hits = sum(any(1024 < t.shape_dict["D"] <= 2048 for t in octave_tests(task, f"s{k}", task.sweep_shapes))
               for k in range(40))
    assert hits >= 20, hits  # the secret picks OCTAVE_PROBES of the empty octaves; never none
    assert len({tuple(t.shape for t in octave_tests(task, f"s{k}", task.sweep_shapes)) for k in range(5)}) > 1


def test_a_bug_between_sweep_sizes_is_incorrect():
    from kstrata.verify import verify_candidate

    task = resolve_task("softmax")
    secret = next(f"s{k}" for k in range(100) if any(
        1024 < t.shape_dict["D"] <= 2048 for t in octave_tests(task, f"s{k}", task.sweep_shapes,
                                                                  perturbed_shapes(task, f"s{k}"))))
    ev = verify_candidate(task, "pytorch", {"source": TWO_TILES}, secret=secret)
    assert ev.verdict.value == "incorrect", ev.to_dict()
