"""Integer outputs of a quantization compared rounding-aware: one step either
way where the exact value before the rounding is within rounding of a tie.

A quantization ``q = clamp(round(x / s))`` computed in float32 rounds ``x / s``
once before ``round`` does; a kernel that multiplies by ``1 / s`` rounds twice.
Where the exact quotient lies within a few units of roundoff of a ``.5`` tie
(for ``round``; of an integer for ``floor``, ``ceil`` and ``trunc``), the
float32 reference, the float64 oracle and an honest kernel may land on
either side: 14 of 16.7M elements of ``quantize_per_tensor`` at its nominal
shape (red-team 2026-12-04), which an exact comparison read as incorrect.
The ``quant`` policy promises one quantization step there and nothing more.

The judge finds those elements with the float64 oracle itself: the
reference's forward is run in float64 twice more under a dispatch mode that
moves every rounding op's input by ``TIE_ULPS * u * |v|`` (``u`` the unit
roundoff of the task's dtype) down, then up, wherever that changes the
rounded value (:func:`rounding_sides`), and keeps it elsewhere. An integer
output element is then right when it equals the reference's, or either
side's (:func:`within_a_tie`). The two sides follow the rounded values
through whatever the forward does after the rounding (the clamp, the cast),
so no knowledge of the quantization's form is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

#: The window around a rounding boundary, in units of the task dtype's unit
#: roundoff times ``|v|``: ``x * (1 / s)`` errs by at most about 2u relative,
#: ``x / s`` by u; twice the larger leaves room for one more rounding.
TIE_ULPS = 4.0

_aten = torch.ops.aten
#: Rounding ops whose input is moved (out-of-place); the in-place ones write the result back.
_ROUNDING = {_aten.round.default, _aten.floor.default, _aten.ceil.default, _aten.trunc.default}
_IN_PLACE = {_aten.round_.default: _aten.round.default, _aten.floor_.default: _aten.floor.default,
             _aten.ceil_.default: _aten.ceil.default, _aten.trunc_.default: _aten.trunc.default}


class _Sides(TorchDispatchMode):
    """Every floating rounding op's result moved to one side (``up`` or down)
    of a boundary that its input is within ``window * |v|`` of; counts such elements."""

    def __init__(self, up: bool, window: float):
        super().__init__()
        self.up, self.window, self.near = up, window, 0

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        base = _IN_PLACE.get(func, func)
        decimals = func is _aten.round.decimals and (kwargs.get("decimals", args[1] if len(args) > 1 else 0) == 0)
        v = args[0] if args else None
        if not ((base in _ROUNDING or decimals) and isinstance(v, torch.Tensor) and v.is_floating_point()):
            return func(*args, **kwargs)
        f = _aten.round.default if decimals else base
        step = v.abs() * self.window
        lo, hi = f(v - step), f(v + step)
        near = lo != hi
        self.near += int(near.sum())
        out = torch.where(near, hi if self.up else lo, f(v))
        if func in _IN_PLACE:
            return v.copy_(out)
        return out


def rounding_sides(forward: Callable[[], Any], dtype: torch.dtype) -> tuple[list[Any], list[Any], int] | None:
    """The float64 forward's outputs with every rounding near a boundary taken
    down, then up (module docstring).

    Parameters
    ----------
    forward:
        Runs the float64 reference on the test's inputs and returns its
        outputs flattened (a list); called twice.
    dtype:
        The task's floating dtype, whose unit roundoff sets the window.

    Returns
    -------
    (down, up, near) or None:
        The two runs' outputs and how many rounded elements lay near a
        boundary (summed over both runs); None when the forward rounds
        nothing near a boundary (no element may differ) or raises.
    """
    u = torch.finfo(dtype).eps / 2 if dtype.is_floating_point else torch.finfo(torch.float32).eps / 2
    sides = []
    near = 0
    for up in (False, True):
        mode = _Sides(up, TIE_ULPS * u)
        try:
            with mode:
                sides.append(forward())
        except Exception:  # noqa: BLE001 - a forward this mode cannot run: no allowance
            return None
        near += mode.near
    if not near:
        return None
    return sides[0], sides[1], near


def within_a_tie(cand: torch.Tensor, native: torch.Tensor, down: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """Mask of elements of integer output ``cand`` that equal the reference's
    ``native``, or the float64 oracle's value on either side of a rounding tie
    (``down``, ``up``; any dtype, compared as values)."""
    c = cand.detach().cpu()
    ok = c == native.detach().cpu()
    for side in (down, up):
        if isinstance(side, torch.Tensor) and side.shape == c.shape:
            ok |= c.to(torch.float64) == side.detach().cpu().to(torch.float64)
    return ok


def nearest_side(cand: torch.Tensor, oracle: torch.Tensor, native: torch.Tensor, down: Any, up: Any
                 ) -> tuple[torch.Tensor, torch.Tensor, int]:
    """The float64 ``oracle`` of a floating output with each element moved to the side of a rounding tie
    (``down``, ``up``: :func:`rounding_sides`' outputs, the oracle's shape) nearer the candidate's ``cand``,
    the reference's ``native`` output with the same elements set alike (so its own error against the moved
    oracle, which the quant policy allows k times everywhere, is not a whole step), and how many moved. A fake quantization ``round(x / s) * s`` whose ``x / s`` is within rounding
    of a ``.5`` tie lands a whole step either way in an honest kernel (one that multiplies by ``127 / amax``
    rounds twice): fake_quant_per_token at T=12, D=65540 on the heavy_tailed draw, x / s = 1.49999995, read
    incorrect, one element a step past the quant policy's elementwise cap (red-team rt67). Elements away
    from a tie have down == up == oracle and stay."""
    c = cand.detach().cpu().double()
    eff = oracle.detach().cpu().double().clone()
    for side in (down, up):
        if isinstance(side, torch.Tensor) and side.shape == eff.shape:
            sd = side.detach().cpu().double()
            closer = (c - sd).abs() < (c - eff).abs()
            eff = torch.where(closer, sd, eff)
    moved = eff != oracle.detach().cpu().double()
    n = native.detach().cpu()
    return eff, torch.where(moved, eff.to(n.dtype), n), int(moved.sum())
