"""Which of ``ModelNew``'s parameters differ from ``Model``'s after the same seed, for feedback
(newcomer nc24: an ``nn.Linear`` whose weight ModelNew drew as ``torch.randn(...) * 0.01``, or
re-drew with ``nn.init.normal_``, was told only "512 of 512 elements outside tolerance"; the
per-column signature of :func:`kstrata.verify.feedback.parameter_hint` fits a 1-D scale only).

The candidate process sends a summary of its module's tensors with the load's reply
(:func:`kstrata.sandbox.param_summary.summarize`); it is the candidate's word, so it is
validated here, decides nothing, and only numbers and shapes from it reach the text: every
name said is the Model's."""

from __future__ import annotations

import math
from typing import Any

import torch

from kstrata.sandbox.param_summary import HEAD, MAX_TENSORS


def _shape(v: Any) -> tuple[int, ...] | None:
    if not isinstance(v, list) or len(v) > 8 or not all(type(s) is int and 0 <= s < 1 << 40 for s in v):
        return None
    return tuple(v)


def _real(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def validated(params: Any) -> list[dict]:
    """The load reply's ``params`` (untrusted): entries with a valid ``name`` (str), ``shape``,
    finite ``mean`` and ``std`` and a list ``head`` of finite numbers; the rest dropped. An
    empty list where ``params`` is not a list."""
    out: list[dict] = []
    for p in params[:MAX_TENSORS] if isinstance(params, list) else []:
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            continue
        shape, mean, std, head = _shape(p.get("shape")), _real(p.get("mean")), _real(p.get("std")), p.get("head")
        if shape is None or mean is None or std is None or not isinstance(head, list) or len(head) > HEAD:
            continue
        vals = [_real(v) for v in head]
        if any(v is None for v in vals):
            continue
        out.append({"name": p["name"], "shape": shape, "mean": mean, "std": std, "head": vals,
                    "kind": "buffer" if p.get("kind") == "buffer" else "parameter"})
    return out


def _pairs(model: torch.nn.Module, cand: list[dict]) -> list[tuple[str, torch.Tensor, dict]]:
    """(Model's name, its tensor, ModelNew's summary): by the same name and shape, then the
    rest by shape in order."""
    mine = [(n, t.detach()) for n, t in [*model.named_parameters(), *model.named_buffers()]
            if t.is_floating_point() and t.numel() > 0]
    left = list(cand)
    pairs, unpaired = [], []
    for n, t in mine:
        same = next((c for c in left if c["name"] == n and c["shape"] == tuple(t.shape)), None)
        if same is not None:
            left.remove(same)
            pairs.append((n, t, same))
        else:
            unpaired.append((n, t))
    for n, t in unpaired:
        same = next((c for c in left if c["shape"] == tuple(t.shape)), None)
        if same is not None:
            left.remove(same)
            pairs.append((n, t, same))
    return pairs


def _draw(mean: float, std: float) -> str:
    return f"the constant {mean:.3g}" if std == 0.0 else f"mean {mean:.3g}, std {std:.3g}"


def differing(model: torch.nn.Module, cand: list[dict]) -> list[str]:
    """Sentences naming each of the Model's tensors whose counterpart in ModelNew (``cand``,
    :func:`validated`) holds other values: its first values differ beyond float32 rounding.
    ``model``: the Model built at the test's parameter seed."""
    said = []
    for n, t, c in _pairs(model, cand):
        d = t.to("cpu", torch.float64).reshape(-1)
        head = d[:len(c["head"])]
        if head.numel() != len(c["head"]):
            continue
        got = torch.tensor(c["head"], dtype=torch.float64)
        if bool(((got - head).abs() <= 1e-6 * head.abs().clamp_min(1e-6)).all()):
            continue
        std = float(d.std()) if d.numel() > 1 else 0.0
        what = "same name" if c["name"] == n else "same shape"
        said.append(f"{n} {tuple(t.shape)}: {_draw(float(d.mean()), std)} in Model, "
                    f"{_draw(c['mean'], c['std'])} in ModelNew's {c['kind']} of the {what}")
    return said
