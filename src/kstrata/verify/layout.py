"""The output layout contract: a candidate's output has the reference
output's memory layout.

A drop-in replacement returns tensors that its caller can use as the
reference's: code that reads their memory (a custom op, ``data_ptr``
arithmetic, a DLPack export, ``view``) sees the same order. A transpose task
whose candidate copied its input and returned ``.t()`` of the copy returned
the right values in the wrong layout, and left the transposing copy to
whoever reads the result (red-team 2026-12-04: correct, and its timed calls
did none of the task's work). So, for every output, the strides of the
dimensions larger than 1 must be the reference output's; where the
reference's output is not contiguous (a transpose or a slice of an input, a
channels-last convolution), a contiguous output is accepted too: its caller
gets the values in row-major order, and no work is left to it. What is never
accepted is a layout the reference does not have, other than contiguous.

The judge reads the layout from the bytes as they arrive: the candidate
process sends a densely laid out output in its memory order with its strides
(:func:`kstrata.sandbox.wire.encode`), so a claimed layout that is not the
real one reads as wrong values; only an output with gaps or overlaps is sent
row-major with its strides as stated.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from kstrata.sandbox.wire import dense_strides


def contiguous_strides(shape: Sequence[int]) -> list[int]:
    """Row-major strides of ``shape``."""
    out, step = [], 1
    for n in reversed(list(shape)):
        out.append(step)
        step *= max(int(n), 1)
    return out[::-1]


def _same(shape: Sequence[int], a: Sequence[int], b: Sequence[int]) -> bool:
    return all(x == y for n, x, y in zip(shape, a, b) if n > 1)


def layout_problem(shape: Sequence[int], stride: Sequence[int] | None, ref: torch.Tensor) -> str | None:
    """What is wrong with an output of ``shape`` laid out with ``stride``
    against the reference's output ``ref`` (module docstring), or None.
    ``shape`` must be ``ref``'s (a wrong shape is the output_type check's)."""
    if stride is None or len(stride) != len(shape) or tuple(shape) != tuple(ref.shape):
        return None
    want = list(ref.stride())
    if _same(shape, stride, want):
        return None
    if _same(shape, stride, contiguous_strides(shape)):
        return None  # the reference's output is not contiguous (else the strides above were the same)
    kind = "contiguous" if _same(shape, want, contiguous_strides(shape)) else "not contiguous"
    theirs = ("a non-contiguous view (gaps or overlaps)" if not dense_strides(list(shape), list(stride))
              else "a transposed or permuted layout")
    return (f"strides {tuple(stride)} where the reference's output has strides {tuple(want)} ({kind}): "
            f"{theirs}; an output must have the reference output's memory layout, or be contiguous (call "
            ".contiguous() or write the output in row-major order: a view left for the caller to copy is "
            "not a drop-in result)")
