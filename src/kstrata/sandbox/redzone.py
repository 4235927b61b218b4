"""Red zones: poisoned memory on both sides of every input a candidate reads.

A kernel that reads past the end of an input (a tile without a bounds mask,
an ``rfactor`` block moved under ``compute_at`` without its predicate, an
off-by-one row pointer) reads whatever the allocator put next to the tensor.
That is usually another tensor's valid data or zeros, and for a ``max``-style
reduction over logits such a value rarely changes the answer, so the bug
passes most tests by luck (CI saw a softmax whose last row read three
elements past the buffer pass 73 hidden tests with one secret and fail with
five others). The candidate harness therefore places each contiguous input
inside a larger buffer and fills :data:`REDZONE_BYTES` on each side with a
pattern that depends on the call's poison pattern (the judge runs every test
under patterns 1 and 2, :data:`kstrata.verify.runner.POISON_PATTERNS`):

=======  ====================================  ========================
pattern  floating point (after the end)        integers / bool
=======  ====================================  ========================
1        ``-B, NaN, -B, NaN, ...``              dtype max / ``True``
2        ``+B, -B, +B, -B, ...``                dtype min / ``False``
=======  ====================================  ========================

``B`` is ``1e30`` or a quarter of the dtype's largest finite value where
that is smaller (fp16: 16376). The zone before the start mirrors the one
after it (the element just before the start equals the one just after the
end). So a sum that reads one element too many sees NaN or ``+B``, a ``max``
that skips NaN (``maxnum``) sees ``+B`` under pattern 2 and a ``min`` sees
``-B`` under pattern 1: the output is wrong or differs between the two
patterns, and the judge says so. This is the guard-page/red-zone idea of
memory checkers (AddressSanitizer: Serebryany et al., USENIX ATC 2012),
applied to values instead of faults so it works the same on CPU and GPU.

Reads that stay inside the buffer but cross a row (the next row's first
elements) are not caught here; the hidden shapes and input draws are there
for those.
"""

from __future__ import annotations

from typing import Any

#: Bytes poisoned on each side of an input: a multiple of 512, so the data
#: pointer keeps the allocator's alignment (64 B on CPU, 512 B on CUDA) that
#: DLPack consumers such as TVM require.
REDZONE_BYTES = 4096


def _zone_after(torch: Any, dtype: Any, device: Any, n: int, pattern: int) -> Any:
    """The ``n`` values placed after the end of a ``dtype`` input (see the table)."""
    zone = torch.empty(n, dtype=dtype, device=device)
    if dtype == torch.bool:
        zone.fill_(pattern == 1)
    elif dtype.is_floating_point or dtype.is_complex:
        real = torch.finfo(dtype).max if dtype.is_floating_point else torch.finfo(torch.float32).max
        big = min(1e30, real / 4)
        if pattern == 1:
            zone[0::2], zone[1::2] = -big, float("nan")
        else:
            zone[0::2], zone[1::2] = big, -big
    else:
        info = torch.iinfo(dtype)
        zone.fill_(info.max if pattern == 1 else info.min)
    return zone


class RedZoned:
    """One reusable input buffer with red zones: ``view`` is what the candidate
    receives (same shape and dtype as the input, contiguous); ``store`` holds
    it with :data:`REDZONE_BYTES` of poison on each side.

    Parameters
    ----------
    torch:
        The ``torch`` module (the harness imports it lazily).
    like:
        A contiguous tensor giving shape, dtype and device.
    """

    def __init__(self, torch: Any, like: Any) -> None:
        self.torch = torch
        self.pad = max(1, REDZONE_BYTES // like.element_size())
        self.n = like.numel()
        self.store = torch.empty(self.n + 2 * self.pad, dtype=like.dtype, device=like.device)
        self.view = self.store[self.pad:self.pad + self.n].view(like.shape)
        self.pattern: int | None = None

    def fill(self, x: Any, pattern: int) -> Any:
        """Copy ``x`` into the buffer and poison both zones for ``pattern``
        (rewritten every call, so a candidate that wrote into them last time
        gains nothing; 0 leaves them as they are); returns :attr:`view`."""
        if pattern in (1, 2):
            zone = _zone_after(self.torch, self.store.dtype, self.store.device, self.pad, pattern)
            self.store[self.pad + self.n:].copy_(zone)
            self.store[:self.pad].copy_(zone.flip(0))
            self.pattern = pattern
        if self.view.data_ptr() != x.data_ptr():
            self.view.copy_(x)
        return self.view

    def zones_intact(self) -> bool:
        """Whether both zones still hold the pattern last written (a write past
        an input's end changes them); True when no pattern was written."""
        if self.pattern is None:
            return True
        torch = self.torch
        zone = _zone_after(torch, self.store.dtype, self.store.device, self.pad, self.pattern)
        both = torch.cat([zone.flip(0), zone])
        held = torch.cat([self.store[:self.pad], self.store[self.pad + self.n:]])
        if both.is_floating_point() or both.is_complex():
            return bool(torch.equal(torch.isnan(held), torch.isnan(both))
                        and torch.equal(held.nan_to_num(), both.nan_to_num()))
        return bool(torch.equal(held, both))


def same_values(torch: Any, a: Any, b: Any) -> bool:
    """Whether tensors ``a`` and ``b`` (same shape, dtype and device) hold the
    same values, NaN counted equal to NaN in the same places: what an input must
    still hold after a call (checked in the candidate's process after a checked
    call, by the judge after a timed one). Equal tensors (no NaN: the usual input)
    are told in one pass, without the NaN-free copies."""
    if torch.equal(a, b):
        return True
    if not torch.equal(a.nan_to_num(), b.nan_to_num()):
        return False
    return not a.is_floating_point() or torch.equal(torch.isnan(a), torch.isnan(b))
