"""Newcomer round nc20 (2026-12-05): two wrong L2-norm kernels that read ``correct``.

Case folder ``cases_nc20`` (the task ``x / sqrt(sum(x^2) + 1e-12)`` and its candidates):

- ``l2norm_noeps.py`` drops the epsilon: an all-zero (padding) row gives NaN where the reference
  gives 0. The ``near_zero`` draw only scaled by 1e-3, so no test had a zero row; a hidden
  ``near_zero`` test now zeroes some rows of each drawn input (:func:`kstrata.tasks.inputs.zero_slices`).
- ``l2norm_cache_last.py`` / ``l2norm_cache_corners.py`` cache the output keyed on the input's address,
  shape and the last element (or the corners and centre): every test rewrote the whole buffer, so the key
  changed too, and no ``no_caching`` finding came. A hidden test now changes a few interior elements of
  one input in place (:mod:`kstrata.verify.partial_change`) and the output must follow.
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


def test_nc20_a_partial_change_keeps_the_buffer_but_a_few_interior_elements():
    from kstrata.verify.partial_change import changed_in_place

    x = torch.randn(64, 128)
    xs = [x, torch.randint(0, 3, (64,))]
    new, i, k = changed_in_place(xs, 5)
    assert i == 0 and 1 <= k <= 8 and torch.equal(xs[0], x)  # the inputs given are not modified
    diff = (new[0] != x).nonzero()
    assert len(diff) == k
    assert bool(((diff[:, 0] > 0) & (diff[:, 0] < 63) & (diff[:, 1] > 0) & (diff[:, 1] < 127)).all())
    assert not bool(((diff[:, 0] == 32) & (diff[:, 1] == 64)).any())  # never the centre
    assert not torch.equal(changed_in_place(xs, 6)[0][0] != x, new[0] != x)  # other seeds, other elements
    assert changed_in_place([torch.randn(3, 4), 2], 5) is None  # nothing large enough


@pytest.mark.slow
@pytest.mark.parametrize("name", ["l2norm_cache_last", "l2norm_cache_corners"])
def test_nc20_a_cache_keyed_on_sampled_elements_is_rejected(kstrata_eval, name):
    d = kstrata_eval(str(CASE / "l2norm_task.py"), str(CASE / f"{name}.py"), "--no-time")
    message = str((d.get("evidence") or {}).get("message"))
    assert (d["verdict"], d.get("check")) == ("rejected", "no_caching"), f"{d['verdict']} {d.get('check')}: {message}"
    assert "changed in place" in message and "the previous call's output" in message, message
