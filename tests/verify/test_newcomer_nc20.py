"""Newcomer round nc20 (2026-12-05): two wrong L2-norm kernels that read ``correct``.

Case folder ``cases_nc20`` (the task ``x / sqrt(sum(x^2) + 1e-12)`` and its candidates):

- ``l2norm_noeps.py`` drops the epsilon: an all-zero (padding) row gives NaN where the reference
  gives 0. The ``near_zero`` draw only scaled by 1e-3, so no test had a zero row; a hidden
  ``near_zero`` test now zeroes some rows of each drawn input (:func:`kstrata.tasks.inputs.zero_slices`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kstrata.tasks.inputs import ZERO_SLICES_EVERY, draw_inputs

CASE = Path(__file__).resolve().parent / "cases_nc20"


def _rows():
    return [torch.randn(6, 5, 40), torch.randn(7), torch.tensor(2.5), torch.randint(0, 5, (6, 40))]


@pytest.mark.parametrize("seed", [11, 12])
def test_nc20_a_hidden_near_zero_draw_has_all_zero_rows(seed):
    hidden, _ = draw_inputs(_rows, seed, "near_zero", vary_scalar_inputs=True)
    public, _ = draw_inputs(_rows, seed, "near_zero")
    x, v = hidden[0], hidden[1]
    zero = (x == 0).all(-1)
    assert int(zero.sum()) == max(1, 30 // ZERO_SLICES_EVERY)
    # the other rows are the public draw's (1e-3 times the normal draw)
    assert torch.equal(x[~zero], public[0][~zero]) and not (public[0] == 0).all(-1).any()
    assert bool((v == 0).all()) == bool(seed % 2)  # a vector: zeroed whole on odd seeds
    assert torch.equal(hidden[3], public[3])  # integers as drawn
    # other seeds pick other rows
    other, _ = draw_inputs(_rows, seed + 2, "near_zero", vary_scalar_inputs=True)
    assert not torch.equal((other[0] == 0).all(-1), zero)


def test_nc20_only_the_drawn_inputs_get_zero_rows():
    hidden, _ = draw_inputs(_rows, 3, "near_zero", only=(1,), vary_scalar_inputs=True)
    assert not (hidden[0] == 0).all(-1).any()


@pytest.mark.slow
@pytest.mark.parametrize("name,verdict", [("l2norm_noeps", "incorrect"), ("l2norm_same", "correct")])
def test_nc20_an_l2_norm_without_its_epsilon_is_incorrect(kstrata_eval, name, verdict):
    d = kstrata_eval(str(CASE / "l2norm_task.py"), str(CASE / f"{name}.py"), "--no-time")
    assert d["verdict"] == verdict, f"{d['verdict']} {d.get('check')}: {(d.get('evidence') or {}).get('message')}"

