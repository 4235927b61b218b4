"""New values in a reused timing input copy, so no timed call repeats an input.

The timer rotates a few input copies (:func:`kstrata.measure.timing.n_input_copies`:
3 to 15) through up to thousands of timed calls, so each copy is read many
times. Copies that came back unchanged let a candidate memoise its outputs on
anything that identifies a copy (its address and version counter, a few of its
values, or all of them hashed) and serve every later call from the memo: a
memo keyed on ``(data_ptr, _version)`` read 1.36x on a GEMM (red-team case 26)
while every checked output was right, since the stored result was.

Before every call that reuses a copy, the judge therefore has the candidate's
process (and the baseline's, so both do the same untimed work) change a block
of every floating input, outside the timed call and before the cache flush
(:func:`freshen`). The judge draws the seed, keeps the list of seeds it sent
per copy, and replays them on its own copy of the staged values when it
checks a call (:func:`replay`), so a checked call on a changed copy is compared
with the oracle of exactly what it read. A memo then misses on every call, or
returns the output of values the copy no longer holds, which a check catches.

The change keeps the values in the task's domain and reaches every element:
each floating element is scaled by its own factor in ``[1 - SPREAD, 1 + SPREAD]``
(away from 1 by at least ``SPREAD / 4``), read from a table of
:data:`TABLE` random factors (a prime length, drawn per seed) tiled over the
flattened tensor from a random offset, applied to the copy's values as
staged (the candidate process keeps a clone of each copy), so values never
drift and the judge replays any state in one pass (:func:`replay`). A
candidate that rewrites those kept values changes what later freshens write
into its copy, which the judge's replay of its own staged values does not
show: the next checked call on that copy reads as an input written into.
Signs, zeros and finiteness are kept. The factors follow no row, column or block structure of the tensor: a candidate
that keeps its last output per copy and recomputes only what changed must
recompute everything. (One contiguous block of 1/8 changed per call let a GEMM
update its memoised product, ``C + A[:, rows] @ dB[rows]``, right to the last
element and 1.43x "faster" than eager: red-team round of 2026-12-04; a
strided pattern would align with a matrix's columns the same way.) Integer
and boolean inputs (token ids, indices, labels, masks) are rotated whole by a
secret offset that is not a whole number of rows instead: the same values, so
every index stays valid, at other positions (one block of 1/8 rotated let a
w8a8 GEMM's memo redo 1/8 of its rows, red-team 2026-12-04). A memo keyed on
unchanged token ids served an embedding-and-MLP model's timed calls and read
3.2x, correct (red-team round 3). One that is sorted along its last dimension
(offsets, lengths as a cumulative sum) is left as it is: a rotation would
unsort it. A copy whose every input is left alone (:func:`changes` is False:
sorted position ids only) would repeat its values exactly, so the timer
draws new values for it instead (:attr:`kstrata.measure.remote.RemoteCandidate.redraw`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from kstrata.sandbox.wire import distinct_elements

#: Every factor is drawn from ``[1 - SPREAD, 1 + SPREAD]`` away from 1 by at least ``SPREAD / 4``.
SPREAD = 0.25
#: Length of the table of factors tiled over a floating input (a prime: the tiling
#: lines up with no power-of-two row length, and a row of any length sees shifted
#: windows of it, not one pattern per column).
TABLE = 4099


def _shift(n: int, last: int, seed: int, k: int) -> int:
    """The rotation of integer input ``k`` (``n`` elements, last dimension ``last``) for
    ``seed``: in ``[1, n - 1]`` and never a whole number of rows, so every row gets the
    end of one row and the start of the next, not a row that was there before (rows
    moved whole would let a memo permute its stored output's rows)."""
    shift = 1 + random.Random(seed * 1_000_003 + k + 1).randrange(n - 1)
    if last >= 2 and shift % last == 0:
        shift -= 1
    return shift


def _table(torch: Any, x: Any, seed: int, k: int) -> tuple[Any, int]:
    """The factors of floating input ``k`` for ``seed``: a table of ``min(x.numel(), TABLE)``
    values of ``x``'s dtype on its device, drawn on the CPU (the same bits wherever they are
    replayed), and the offset into it of element 0 (element ``j`` of ``x`` in row-major order
    gets ``table[(offset + j) % len(table)]``)."""
    n = x.numel()
    g = torch.Generator().manual_seed((seed * 1_000_003 + k) % (1 << 63))
    u = torch.rand(min(n, TABLE), generator=g, dtype=torch.float64, device="cpu") * 2 - 1  # [-1, 1)
    table = 1 + torch.sign(u) * (SPREAD / 4 + (3 * SPREAD / 4) * u.abs())
    table[table == 1] = 1 + SPREAD / 4  # u == 0
    off = int(torch.randint(0, table.numel(), (1,), generator=g, device="cpu"))
    return table.to(device=x.device, dtype=x.dtype), off


def _scale(torch: Any, flat: Any, seed: int, k: int, inverse: bool) -> None:
    """Multiply (``inverse``: divide) the contiguous 1-D ``flat``, floating input ``k``'s
    elements, in place by its factors for ``seed`` (:func:`_table`), the table tiled over it
    by broadcasting: a head up to the first whole table, rows of one table each, a tail.
    It was ``table.repeat(...)[off:off + n]``: a factor tensor as large as the input per
    freshen (two for a freshen that divides the previous one back), most of the judge's
    time in a CPU timing of cross_entropy at 1024x32000 (benchmarks/results/timing_profile_cpu.txt).
    Element by element the same operation on the same values, so the same bits."""
    table, off = _table(torch, flat, seed, k)
    t, n = table.numel(), flat.numel()
    head = min(n, t - off)
    rows = (n - head) // t
    parts = [(flat[:head], table[off:off + head])]
    if rows:
        parts.append((flat[head:head + rows * t].view(rows, t), table))
    if head + rows * t < n:
        parts.append((flat[head + rows * t:], table[:n - head - rows * t]))
    for part, f in parts:
        if inverse:
            part.div_(f)
        else:
            part.mul_(f)


def _sorted(torch: Any, x: Any) -> bool:
    """Whether integer tensor ``x`` is non-decreasing along its last dimension."""
    return x.dim() == 0 or x.shape[-1] < 2 or bool((x[..., 1:] >= x[..., :-1]).all())


def _changed(torch: Any, x: Any) -> Any:
    """What :func:`freshen` changes of argument ``x``: the tensor itself, the real view of a
    complex one, or None when it leaves ``x`` alone (not a tensor, empty, an expanded view,
    one integer element, integers sorted along their last dimension)."""
    if isinstance(x, torch.Tensor) and x.is_complex() and not x.is_conj():
        # its real and imaginary parts, each scaled by its own factor (a complex input left alone let a
        # memo keyed on its address serve every timed call of a complex product: red-team rt54)
        x = torch.view_as_real(x)
    if not (isinstance(x, torch.Tensor) and x.numel() and not x.is_complex() and distinct_elements(x.shape, x.stride())):
        return None
    if not x.is_floating_point() and (x.numel() < 2 or x.dtype != torch.bool and _sorted(torch, x)):
        return None
    return x


def changes(torch: Any, xs: Sequence[Any]) -> bool:
    """Whether :func:`freshen` changes any argument of the input copy ``xs``; False for a
    copy whose every input it leaves alone (position ids sorted along the sequence, the
    only input of a rotary-embedding table): reused, such a copy repeats its values exactly."""
    return any(_changed(torch, x) is not None for x in xs)


def repeats(torch: Any, xs: Sequence[Any]) -> bool:
    """Whether the input copy ``xs``, reused after :func:`freshen`, would
    hold some of the values an earlier call read: it changes none of its
    arguments, or leaves a tensor of two or more elements as it is (sorted
    integer ids, an expanded view) beside one it changes. A memo of the part
    of the work that depends on such a tensor alone is served on every reuse:
    red-team rt64, a rotary embedding of a float ``x`` at sorted position
    ids memoised its cos/sin tables on the ids (``x`` freshened, so the copy
    was reused) and read correct and 12x faster than eager. Such a copy is
    drawn anew instead (:attr:`kstrata.measure.remote.RemoteCandidate.redraw`).
    A one-element integer (a count, a length) is left alone."""
    return not changes(torch, xs) or any(
        isinstance(x, torch.Tensor) and x.numel() >= 2 and _changed(torch, x) is None for x in xs)


def _apply(torch: Any, xs: Sequence[Any], seed: int, inverse: bool, staged: Sequence[Any] | None = None) -> None:
    """Freshen every argument of ``xs`` that :func:`_changed` changes, in place, with ``seed``'s
    factors (``inverse``: divided back) or rotation; with ``staged`` (the copy's values as staged,
    argument by argument), each changed argument becomes its staged values changed by ``seed``."""
    for k, x in enumerate(xs):
        # with ``staged``, its values decide (``xs`` may be uninitialized: replay; or written into by
        # the candidate since: integers it sorted would be left alone on its side only)
        if _changed(torch, x if staged is None else staged[k]) is None:
            continue
        if staged is not None and not distinct_elements(x.shape, x.stride()):
            continue  # an expanded view staged as a dense clone (the candidate process's): left alone, as the judge's
        x = torch.view_as_real(x) if x.is_complex() else x
        # the elements in row-major order whatever the layout: a view of a contiguous tensor, else a copy
        # written back below. The judge's staged copy of a task input keeps the task's layout (a transposed
        # weight) while the candidate's arrives contiguous: both must get the same factor at the same index
        # (a layout left alone on one side only read as an honest candidate writing into its inputs).
        flat = x.view(-1) if x.is_contiguous() else x.reshape(-1)
        src = flat
        if staged is not None:
            p = staged[k]
            src = (torch.view_as_real(p) if p.is_complex() else p).reshape(-1)
        if not x.is_floating_point():  # integers and booleans: all rotated, values kept
            n = x.numel()
            shift = _shift(n, x.shape[-1] if x.dim() else 1, seed, k)
            flat.copy_(torch.roll(src, -shift if inverse else shift))
        elif x.element_size() == 1:  # float8: no arithmetic of its own; through float32, rounded back
            v = src.float()
            _scale(torch, v, seed, k, inverse)
            flat.copy_(v.to(x.dtype))
        else:
            if staged is not None:
                flat.copy_(src)
            _scale(torch, flat, seed, k, inverse)
        if not x.is_contiguous():
            x.copy_(flat.view(x.shape))


def freshen(torch: Any, xs: Sequence[Any], seed: int, previous: int | None = None,
            staged: Sequence[Any] | None = None) -> None:
    """Change the input copy ``xs`` in place for the next timed call.

    Parameters
    ----------
    torch:
        The ``torch`` module (the candidate process passes the one it captured
        before any candidate code ran).
    xs:
        One input copy: tensors (any shape, layout and device, element by
        element in row-major order: floating ones scaled, complex ones in their
        real and imaginary parts, integer and boolean
        ones rotated whole, except integer ones sorted along their last
        dimension; one whose elements share memory, an expanded view, is left
        alone) and other arguments (left alone).
    seed:
        The judge's draw for this freshen.
    previous:
        The seed of this copy's previous freshen, whose block is divided (or
        rotated) back first (None for the first). Unused with ``staged``.
    staged:
        The copy's values as staged (the same shapes; any layout, read in
        row-major order): each changed argument of ``xs`` becomes its staged
        values changed by ``seed`` alone, whatever the freshens before (what
        the candidate process does: it keeps the staged values). The judge
        then replays a copy's state from its staged values and the last seed
        alone (:func:`replay`), one pass however often the copy was reused;
        dividing the previous factors back left a few ulps of rounding that
        only replaying every freshen in order reproduced (issue #18: the
        replay was the largest part of the judge's time in a long timing).
    """
    if staged is not None:
        _apply(torch, xs, seed, inverse=False, staged=staged)
        return
    if previous is not None:
        _apply(torch, xs, previous, inverse=True)
    _apply(torch, xs, seed, inverse=False)


def replay(torch: Any, staged: Sequence[Any], seeds: Sequence[int]) -> list[Any]:
    """What a copy staged as ``staged`` holds after the freshens ``seeds`` (in
    order) made with its staged values (``freshen(..., staged=...)``, as the
    candidate process makes them: the last seed alone decides): new tensors
    (``staged`` is not changed), the same arithmetic on the same device as the
    candidate's process, so the values are bit-identical."""
    if not seeds:
        return [x.clone() if isinstance(x, torch.Tensor) else x for x in staged]
    # every argument the freshen changes is written whole from ``staged``: no clone to overwrite
    xs = [(torch.empty_like(x) if _changed(torch, x) is not None else x.clone()) if isinstance(x, torch.Tensor)
          else x for x in staged]
    if seeds:
        freshen(torch, xs, seeds[-1], staged=staged)
    return xs
