"""The judge's hidden-test draws work under another default device (on a GPU the
judge draws inside ``torch.device("cuda")``): a factory call with the judge's
CPU generator but no ``device=`` went to the default device and failed
("Expected a 'cuda' device type for generator but found 'cpu'"): every
tilelang-cuda verification on the H100 of 2026-12-05 ended in that
evaluator_exception (vary_scalars); the zero rows and the in-place partial
change did the same. ``meta`` stands in for ``cuda`` on a machine without one."""

from __future__ import annotations

import torch

from kstrata.tasks.inputs import vary_scalars, zero_slices
from kstrata.verify.partial_change import changed_in_place


def _inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(64, 32, generator=g), torch.tensor([0.5]), 0.25, torch.tensor([3])]


def test_vary_scalars_under_another_default_device():
    xs = _inputs()
    with torch.device("meta"):
        out = vary_scalars(list(xs), "normal", 3, ints=(3,))
    assert all(x.device.type == "cpu" for x in out if isinstance(x, torch.Tensor))
    assert not torch.equal(out[1], xs[1]) and out[2] != xs[2] and int(out[3]) != 3  # each one-value input moved


def test_zero_slices_under_another_default_device():
    xs = _inputs()
    with torch.device("meta"):
        out = zero_slices([xs[0].clone()], 5)
    rows = (out[0] == 0).all(1)
    assert out[0].device.type == "cpu" and 1 <= int(rows.sum()) < 64


def test_partial_change_under_another_default_device():
    x = _inputs()[0]
    with torch.device("meta"):
        got = changed_in_place([x], 7)
    assert got is not None
    new, index, n = got
    assert index == 0 and n > 0 and new[0].device.type == "cpu" and not torch.equal(new[0], x)
