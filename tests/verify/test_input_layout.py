"""The candidate is verified and timed on the inputs' layout as the task's ``get_inputs()`` makes them
(newcomer nc17): a transposed or sliced input reached the candidate as a contiguous copy, and a kernel
that read the input's memory as row-major was ``correct`` though wrong on the task's own inputs.
Case folder ``cases/nc17_input_layout``."""

from __future__ import annotations

import pytest
import torch

from kstrata.sandbox import status, wire
from kstrata.tasks.inputs import apply_distribution

CASE = "nc17_input_layout"
needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")

LAYOUTS = {
    "contiguous": lambda: torch.randn(4, 6),
    "transposed": lambda: torch.randn(6, 4).t(),
    "permuted": lambda: torch.randn(2, 3, 4).permute(2, 0, 1),
    "sliced": lambda: torch.randn(4, 12)[:, ::2],
    "offset slice": lambda: torch.randn(5, 12)[1:, 3:9],
}


@pytest.mark.parametrize("make", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_the_judges_inputs_cross_the_wire_in_their_layout(make):
    x = make()
    bufs: list = []
    got = wire.decode(wire.encode([x], bufs, copy=False, layout=True, views=True), bufs, views=True)[0]
    assert got.stride() == x.stride() and torch.equal(got, x)


def test_a_view_sent_to_the_judge_is_refused():
    """The judge reads a candidate's replies without ``views``: a span is not accepted there."""
    bufs: list = []
    enc = wire.encode([torch.randn(4, 12)[:, ::2]], bufs, layout=True, views=True)
    with pytest.raises(wire.WireError, match="span"):
        wire.decode(enc, bufs)


def test_an_expanded_input_is_sent_dense():
    x = torch.randn(6).expand(4, 6)
    bufs: list = []
    got = wire.decode(wire.encode([x], bufs, layout=True, views=True), bufs, views=True)[0]
    assert torch.equal(got, x) and got.is_contiguous()


@pytest.mark.parametrize("dist", ["uniform", "heavy_tailed", "large", "grid", "offset", "ties", "shifted"])
@pytest.mark.parametrize("make", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_a_distribution_keeps_the_inputs_layout(make, dist):
    x = make()
    y = apply_distribution([x], dist, seed=3)[0]
    assert y.shape == x.shape and y.stride() == x.stride()
    assert not torch.equal(y, x)


@needs_sandbox
@pytest.mark.parametrize("task", ["task_transposed.py", "task_sliced.py"])
def test_a_kernel_that_reads_the_input_as_row_major_is_incorrect(kstrata_eval, task):
    d = kstrata_eval(f"{CASE}/{task}", f"{CASE}/reads_as_row_major.py", "--scope", "small", "--no-time")
    assert d["verdict"] == "incorrect", d


@needs_sandbox
@pytest.mark.parametrize("task", ["task_transposed.py", "task_sliced.py"])
def test_an_honest_kernel_on_a_non_contiguous_input_is_correct_and_timed(kstrata_eval, task):
    d = kstrata_eval(f"{CASE}/{task}", f"{CASE}/honest.py", "--scope", "small", "--budget-ms", "200")
    assert d["verdict"] == "correct", d
    assert d["timing"] is not None and d["timing"].get("speedup") is not None, d
