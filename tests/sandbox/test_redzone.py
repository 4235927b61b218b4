"""Red zones around the candidate's inputs (:mod:`kstrata.sandbox.redzone`)."""

from __future__ import annotations

import math

import pytest
import torch

from kstrata.sandbox.redzone import REDZONE_BYTES, RedZoned


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_float_zones_hold_the_pattern_on_both_sides(dtype):
    x = torch.randn(5, 77).to(dtype)
    z = RedZoned(torch, x)
    pad = REDZONE_BYTES // x.element_size()
    v = z.fill(x, 2)
    assert torch.equal(v, x) and v.shape == x.shape and v.is_contiguous()
    assert v.data_ptr() % 64 == 0  # alignment kept for DLPack consumers
    after, before = z.store[pad + x.numel():].double(), z.store[:pad].double()
    big = min(1e30, torch.finfo(dtype).max / 4)
    assert math.isclose(after[0].item(), big, rel_tol=1e-2) and math.isclose(after[1].item(), -big, rel_tol=1e-2)
    assert torch.equal(before, after.flip(0))  # the element before the start = the one after the end
    z.fill(x, 1)
    after = z.store[pad + x.numel():].double()
    assert after[0].item() < -1e3 and math.isnan(after[1].item())
    # a max that skips NaN sees +B under pattern 2, a min sees -B under pattern 1
    z.fill(x, 2)
    assert torch.as_strided(z.view, (x.numel() + 1,), (1,)).double().max().item() > 1e3
    z.fill(x, 1)
    assert torch.as_strided(z.view, (x.numel() + 1,), (1,)).double().min().item() < -1e3


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8, torch.bool])
def test_integer_and_bool_zones(dtype):
    x = torch.ones(3, 4, dtype=dtype)
    z = RedZoned(torch, x)
    z.fill(x, 1)
    past = torch.as_strided(z.view, (1,), (1,), z.view.storage_offset() + x.numel())
    assert past.item() == (True if dtype == torch.bool else torch.iinfo(dtype).max)
    z.fill(x, 2)
    assert past.item() == (False if dtype == torch.bool else torch.iinfo(dtype).min)


def test_a_write_into_a_zone_is_seen_and_undone_next_call():
    x = torch.randn(16)
    z = RedZoned(torch, x)
    v = z.fill(x, 1)
    assert z.zones_intact()
    torch.as_strided(v, (1,), (1,), v.storage_offset() - 1).fill_(0.0)  # one before the start
    assert not z.zones_intact()
    z.fill(x, 1)
    assert z.zones_intact()


def test_pattern_zero_copies_only_and_the_buffer_is_reused():
    x, y = torch.randn(4, 4), torch.randn(4, 4)
    z = RedZoned(torch, x)
    a = z.fill(x, 0)
    b = z.fill(y, 1)
    assert a.data_ptr() == b.data_ptr() and torch.equal(b, y)


def test_timed_copies_have_the_checked_inputs_layout():
    """Staged (timed) inputs sit in red-zoned buffers like the checked calls'
    inputs, and timed calls run in the same autograd mode, so a candidate cannot
    tell a timed call from a checked one by its input's storage or the mode."""
    from kstrata.sandbox import wire
    from kstrata.sandbox.child import Harness

    h = Harness()
    xs = [torch.randn(5, 77), torch.randn(8, 3)]
    bufs: list = []
    enc = wire.encode([xs, xs], bufs)
    reply, _ = h.stage({"sets": enc, "flush": False, "flush_bytes": 0}, bufs)
    assert reply["copies"] == 2
    checked = h._same_address([x.clone() for x in xs], 1)
    for copy in h.copies:
        for a, b, x in zip(copy, checked, xs):
            assert torch.equal(a, x) and a.untyped_storage().nbytes() == b.untyped_storage().nbytes()
            assert a.untyped_storage().nbytes() == x.numel() * 4 + 2 * REDZONE_BYTES
    seen = []
    h.fn = lambda *a: seen.append((torch.is_grad_enabled(), torch.is_inference_mode_enabled())) or a[0] * 2
    h.run({"i": 0}, [])
    assert seen == [(False, False)]
