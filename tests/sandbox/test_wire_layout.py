"""Outputs cross the wire in their memory layout (:func:`kstrata.sandbox.wire.encode` with
``layout=True``), so the judge reads their strides from the bytes (:mod:`kstrata.verify.layout`)."""

from __future__ import annotations

import pytest
import torch

from kstrata.sandbox import wire
from kstrata.verify.layout import layout_problem


def _round_trip(t: torch.Tensor, layout: bool = True) -> tuple[dict, torch.Tensor]:
    bufs: list = []
    enc = wire.encode(t, bufs, layout=layout)
    return enc, wire.decode(enc, bufs)


def test_a_transposed_output_arrives_transposed_with_its_values():
    x = torch.randn(5, 7)
    y = x.clone().t()
    enc, got = _round_trip(y)
    assert enc["stride"] == [1, 7] and got.stride() == (1, 7) and torch.equal(got, y)
    assert layout_problem(list(got.shape), list(got.stride()), y.contiguous()) is not None
    assert layout_problem(list(got.shape), list(got.stride()), y) is None  # the reference's own layout


def test_a_forged_contiguous_claim_reads_as_wrong_values():
    y = torch.arange(12.0).reshape(3, 4).t()  # memory order 0, 1, 2, ...: not y's row-major order
    bufs: list = []
    enc = wire.encode(y, bufs, layout=True)
    enc["stride"] = [3, 1]  # a candidate process claiming row-major for the same bytes
    got = wire.decode(enc, bufs)
    assert not torch.equal(got, y)


def test_gaps_travel_row_major_with_their_strides_stated():
    y = torch.randn(4, 20)[:, :16]
    enc, got = _round_trip(y)
    assert enc["dense"] is False and enc["stride"] == [20, 1]
    assert got.is_contiguous() and torch.equal(got, y)
    assert layout_problem([4, 16], enc["stride"], torch.empty(4, 16)) is not None


def test_malformed_strides_are_refused():
    y = torch.randn(3, 4)
    bufs: list = []
    enc = wire.encode(y, bufs, layout=True)
    for bad in ([4], [4, -1], [8, 1], "x"):
        with pytest.raises(wire.WireError):
            wire.decode({**enc, "stride": bad}, bufs)


def test_sizes_of_one_and_contiguous_outputs_are_always_accepted():
    ref = torch.randn(6, 1, 5)
    assert layout_problem([6, 1, 5], [5, 99, 1], ref) is None  # the stride of a size-1 dim means nothing
    ref_t = torch.randn(5, 6).t()  # a reference that returns a transposed view
    assert layout_problem([6, 5], [5, 1], ref_t) is None  # contiguous is accepted there
    assert layout_problem([6, 5], [1, 6], ref_t) is None  # and so is the reference's layout
    enc, _ = _round_trip(torch.randn(2, 3), layout=False)
    assert "stride" not in enc  # the judge's inputs: row-major, as before
