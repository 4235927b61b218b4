"""Coarser input grids: outputs that follow the reference on inputs rounded below their contract.

A W4A16 GEMM whose activations were quantized to int8 with a per-token absmax scale (W4A8, twice an
fp16 tensor core's rate) errs about as much as one that accumulates in float16 past K ~ 400, so an
error-size tolerance cannot tell them apart there (red-team rt80, open item 1; case
``tests/verify/cases/rt76_w4a16_int8_activations``). Their errors differ in kind: the int8 one is a
deterministic function of the inputs, the float64 reference applied to the inputs on the int8 grid,
while an honest kernel's rounding and accumulation errors are independent of where that grid falls.

For each grid of :func:`grids` (int8 with a per-row, per-tensor or per-32/128-group absmax scale;
uint8 per row with a zero point; float8 e4m3 scaled per row, per tensor and unscaled; float8 e5m2
scaled per row and unscaled; bfloat16 for float16 inputs; bfloat16 and float16 for float32 inputs of a
task that does not allow reduced precision), applied to each floating input alone
(where there are at most two) and to all of them together, :func:`coarser_grid` runs the float64 reference on the rounded inputs
(``o_g``) and compares the candidate ``c`` with it and with the float64 oracle ``o``: the candidate
follows the grid where ``||c - o_g|| < GRID_RATIO * ||c - o||`` (norms over every floating output).

An honest candidate's error ``e = c - o`` is independent of ``r = o_g - o``, so
``||c - o_g||^2 = ||e - r||^2 ~ ||e||^2 + ||r||^2 >= ||e||^2``: the ratio is at least about 1
(measured on w4a16_gemm, M x K x N from 16 x 256 x 64 to 509 x 1024 x 521 and 64 x 4096 x 128, normal
and uniform draws: 1.0 to 22 for float16 accumulation left to right), while the int8 per-token
candidate reads 0.03 to 0.07 (its remaining error is the float16 output's rounding). Where the grid
changes nothing (inputs already on it: a fake quantization's own output) ``o_g = o`` and the ratio is 1.

Sources: Xiao et al. 2023 (SmoothQuant, per-token int8 activations); Micikevicius et al. 2022 (FP8
formats, e4m3 with a per-tensor scale).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

#: a candidate follows a grid where its distance to the grid's float64 outputs is under this share of
#: its distance to the exact ones (honest kernels measured >= 1.0, int8 per-token activations <= 0.07)
GRID_RATIO = 0.5
#: fewer floating output elements than this decide nothing (a chance correlation of a few errors)
GRID_MIN_ELEMENTS = 64
#: the quantization groups of the per-group int8 grids (GPTQ/AWQ's and the w4a16 tasks' 128; the
#: microscaling formats' 32)
GROUPS = (32, 128)
#: the grids are looked for at shapes whose call costs at most this many FLOPs (the task's formula) and
#: whose inputs, parameters and buffers hold at most GRID_MAX_ELEMENTS elements: each grid is one float64
#: forward per input set (a w4a16_gemv forward at K=2048, N=5003, 5M packed weights, took 0.7 s)
GRID_MAX_FLOPS = 1e9
GRID_MAX_ELEMENTS = 4_000_000


def _absmax_grid(x: torch.Tensor, levels: float, dims: str, group: int = 0) -> torch.Tensor:
    """``x`` (float64) rounded on a symmetric grid of ``levels`` steps per side, scaled by the absmax
    of each row (``dims="row"``, the last dimension), each ``group`` of a row (``"group"``) or the
    whole tensor (``"tensor"``)."""
    if dims == "group":
        g = x.reshape(*x.shape[:-1], x.shape[-1] // group, group)
        return _absmax_grid(g, levels, "row").reshape(x.shape)
    amax = x.abs().amax(dim=-1, keepdim=True) if dims == "row" else x.abs().amax()
    s = torch.where(amax > 0, amax / levels, torch.ones_like(amax))
    return torch.round(x / s).clamp(-levels, levels) * s


def _asymmetric(x: torch.Tensor) -> torch.Tensor:
    """``x`` (float64) on a uint8 grid per row: step ``(max - min) / 255``, an integer zero point."""
    lo, hi = x.amin(dim=-1, keepdim=True), x.amax(dim=-1, keepdim=True)
    s = torch.where(hi > lo, (hi - lo) / 255, torch.ones_like(hi))
    z = torch.round(-lo / s)
    return ((torch.round(x / s) + z).clamp(0, 255) - z) * s


def _float8(x: torch.Tensor, dims: str | None, dtype: torch.dtype) -> torch.Tensor:
    """``x`` (float64) rounded to the float8 ``dtype`` after scaling its absmax per row or tensor to
    the format's largest finite value (``dims`` None: unscaled, saturating)."""
    top = float(torch.finfo(dtype).max)
    if dims is None:
        return x.clamp(-top, top).to(dtype).to(torch.float64)
    amax = x.abs().amax(dim=-1, keepdim=True) if dims == "row" else x.abs().amax()
    s = torch.where(amax > 0, amax / top, torch.ones_like(amax))
    return (x / s).clamp(-top, top).to(dtype).to(torch.float64) * s


def grids(dtype: torch.dtype, reduced_ok: bool, last: int
          ) -> list[tuple[str, Callable[[torch.Tensor], torch.Tensor]]]:
    """``[(name, round)]``: the grids below an input of ``dtype`` whose last dimension has ``last``
    elements; ``round`` takes and returns float64 tensors of the input's shape. ``reduced_ok`` (the
    task allows reduced-precision compute) leaves out the 16-bit float grids of a float32 input."""
    out: list[tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = [
        ("int8 with a per-row absmax scale", lambda x: _absmax_grid(x, 127, "row")),
        ("int8 with a per-tensor absmax scale", lambda x: _absmax_grid(x, 127, "tensor")),
        ("uint8 with a per-row min-max scale and zero point", _asymmetric),
        ("float8 e4m3 with a per-row scale", lambda x: _float8(x, "row", torch.float8_e4m3fn)),
        ("float8 e4m3 with a per-tensor scale", lambda x: _float8(x, "tensor", torch.float8_e4m3fn)),
        ("float8 e4m3 (unscaled)", lambda x: _float8(x, None, torch.float8_e4m3fn)),
        ("float8 e5m2 (unscaled)", lambda x: _float8(x, None, torch.float8_e5m2)),
    ]
    for g in GROUPS:
        if last > g and last % g == 0:
            out.append((f"int8 with a per-{g}-group absmax scale",
                        lambda x, g=g: _absmax_grid(x, 127, "group", g)))
    if dtype == torch.float16 or (dtype == torch.float32 and not reduced_ok):
        out.append(("bfloat16", lambda x: x.to(torch.bfloat16).to(torch.float64)))
    if dtype == torch.float32 and not reduced_ok:
        out.append(("float16", lambda x: x.to(torch.float16).to(torch.float64)))
    return out


def applies(task: Any) -> bool:
    """Whether a task's verification looks for coarser input grids: a ``quant`` tolerance, or one that
    allows reduced-precision compute (where an error-size tolerance is loose enough to admit them)."""
    meta = task.meta
    return meta.tolerance.kind == "quant" or bool(meta.precision.allow_reduced_precision)


def _distance(outs: list[Any], to: list[Any]) -> float:
    return sum(float((c.to(torch.float64) - o.to(torch.float64)).pow(2).sum()) for c, o in zip(outs, to)) ** 0.5


def coarser_grid(forward64: Callable[[list[Any]], list[Any]], pristine: list[Any], out1: list[Any],
                 oracles: list[Any], reduced_ok: bool) -> tuple[str, dict[str, Any]] | None:
    """The grid the candidate's outputs follow (module docstring), or None.

    Parameters
    ----------
    forward64:
        The float64 reference: inputs (float64 where floating) -> outputs.
    pristine:
        The test's inputs (task dtypes).
    out1:
        The candidate's outputs (CPU).
    oracles:
        The float64 oracle's outputs on ``pristine``.
    reduced_ok:
        The task allows reduced-precision compute (:func:`grids`).

    Returns
    -------
    tuple[str, dict] | None
        ``(what, stats)`` of the nearest grid where its ``ratio`` is under :data:`GRID_RATIO`: ``what``
        names the grid and the inputs rounded to it; ``stats`` holds ``to_exact`` and ``to_grid`` (the
        two distances) and ``ratio``. None where the floating outputs have under
        :data:`GRID_MIN_ELEMENTS` elements or a non-finite one, the candidate equals the oracle, or
        no grid is followed.
    """
    idx = [i for i, (c, o) in enumerate(zip(out1, oracles)) if isinstance(c, torch.Tensor)
           and isinstance(o, torch.Tensor) and o.is_floating_point() and c.is_floating_point() and c.shape == o.shape]
    if sum(oracles[i].numel() for i in idx) < GRID_MIN_ELEMENTS:
        return None
    cand, exact = [out1[i] for i in idx], [oracles[i] for i in idx]
    if not all(bool(torch.isfinite(c).all()) for c in cand):
        return None
    to_exact = _distance(cand, exact)
    if not to_exact > 0:
        return None
    floats = [i for i, x in enumerate(pristine) if isinstance(x, torch.Tensor) and x.is_floating_point()
              and x.dim() >= 1 and x.numel() > 1 and bool(torch.isfinite(x).all())]
    # each input alone where there are one or two (activations and weights), all of them together
    sets = ([[i] for i in floats] if len(floats) <= 2 else []) + ([floats] if len(floats) > 1 else [])
    x64 = [x.to(torch.float64) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in pristine]
    best: tuple[str, dict[str, Any]] | None = None
    for which in sets:
        dtypes = {pristine[i].dtype for i in which}
        lasts = {pristine[i].shape[-1] for i in which}
        if len(dtypes) != 1 or len(lasts) != 1:
            continue
        for name, rounded in grids(dtypes.pop(), reduced_ok, lasts.pop()):
            xs = [rounded(x) if i in which else x for i, x in enumerate(x64)]
            try:
                outs = list(forward64(xs))
            except Exception:  # noqa: BLE001 - a forward that does not take the rounded inputs: no evidence
                continue
            if len(outs) != len(oracles) or not all(isinstance(outs[i], torch.Tensor)
                                                    and outs[i].shape == oracles[i].shape for i in idx):
                continue
            grid = [outs[i] for i in idx]
            to_grid = _distance(cand, grid)
            if best is None or to_grid < best[1]["to_grid"]:
                inputs = "every floating input" if len(which) > 1 else f"input {which[0]}"
                best = (f"{inputs} rounded to {name}",
                        {"to_exact": to_exact, "to_grid": to_grid, "ratio": to_grid / to_exact})
    return best if best is not None and best[1]["ratio"] < GRID_RATIO else None
