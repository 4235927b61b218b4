"""Input distributions applied on top of a task's ``get_inputs()`` draw.

Each distribution replaces the selected floating-point inputs (all of them, or
``TaskMeta.dist_inputs``) by a tensor of the same shape and dtype:

=============  ==================================================================
normal         the task's own draw (usually ``torch.randn``), unchanged
uniform        U(-1, 1)
heavy_tailed   Student-t with 3 degrees of freedom (finite variance, rare huge values)
large          the normal draw times 100 (exposes overflow in ``exp``/accumulators)
near_zero      the normal draw times 1e-3 (exposes division and epsilon handling)
shifted        the normal draw minus 10 (all-negative logits: exposes padding
               values such as ``other=0.0`` that dominate a max or a sum of ``exp``)
=============  ==================================================================

Integer inputs (indices, labels, quantized weights) are never changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from kstrata.tasks.meta import DISTRIBUTIONS


def apply_distribution(
    inputs: Sequence[Any], dist: str, seed: int, only: Sequence[int] | None = None
) -> list[Any]:
    """Return a copy of ``inputs`` with ``dist`` applied to the selected floats.

    Parameters
    ----------
    inputs:
        The tensors (and other values) from ``get_inputs()``.
    dist:
        One of :data:`kstrata.tasks.meta.DISTRIBUTIONS`.
    seed:
        Seed of the generator used for the new draws.
    only:
        Indices the distribution applies to; None means every floating tensor.

    Raises
    ------
    ValueError
        For an unknown distribution name.
    """
    if dist not in DISTRIBUTIONS:
        raise ValueError(f"unknown distribution {dist!r}; expected one of {DISTRIBUTIONS}")
    gen = torch.Generator().manual_seed(seed)
    out = list(inputs)
    for i, x in enumerate(out):
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            continue
        if only is not None and i not in only:
            continue
        if dist == "normal":
            continue
        if dist == "uniform":
            new = torch.rand(x.shape, generator=gen, dtype=torch.float64) * 2 - 1
        elif dist == "heavy_tailed":
            z = torch.randn(x.shape, generator=gen, dtype=torch.float64)
            chi2 = sum(torch.randn(x.shape, generator=gen, dtype=torch.float64) ** 2 for _ in range(3))
            new = z / torch.sqrt(chi2 / 3)
        elif dist == "large":
            new = x.double() * 100
        elif dist == "near_zero":
            new = x.double() * 1e-3
        else:  # shifted
            new = x.double() - 10
        out[i] = new.to(x.dtype).contiguous()
    return out
