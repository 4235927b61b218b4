"""A summary of a loaded ``ModelNew``'s parameters and buffers, made in the candidate process
and sent with the load's reply, for feedback only (the judge decides nothing on it).

The judge builds ``Model`` after the same seed (``torch.manual_seed``) and compares
(:mod:`kstrata.verify.param_draws`): a parameter that ``ModelNew`` draws in another way
(``torch.randn(...) * 0.01`` for ``nn.Linear``'s uniform draw, a re-initialised weight) is
named there (newcomer nc24). Imports nothing of the judge (this module runs next to
candidate code, :data:`kstrata.sandbox.child.JUDGE_MODULES`)."""

from __future__ import annotations

import math
from typing import Any

#: at most this many tensors are summarized, each of at most this many elements
MAX_TENSORS = 64
MAX_ELEMENTS = 1 << 24
#: the first values sent of each (row-major)
HEAD = 8


def _num(v: float) -> float | None:
    """``v``, or None where not finite (the reply is JSON)."""
    return v if math.isfinite(v) else None


def summarize(fn: Any) -> list[dict]:
    """One dict per floating parameter, then buffer, of ``fn`` when it is a ``torch.nn.Module``
    (the pytorch backends' ``ModelNew``): ``name`` (str), ``kind`` (``"parameter"`` or
    ``"buffer"``), ``shape`` (list of int), ``mean`` and ``std`` (float64 of its values, None
    where not finite), ``head`` (its first :data:`HEAD` values). An empty list for anything
    else, and where the module's own methods raise (its code is the candidate's)."""
    import torch

    if not isinstance(fn, torch.nn.Module):
        return []
    out: list[dict] = []
    try:
        named = [("parameter", n, t) for n, t in fn.named_parameters()]
        named += [("buffer", n, t) for n, t in fn.named_buffers()]
        for kind, name, t in named[:MAX_TENSORS]:
            if not isinstance(t, torch.Tensor) or not t.is_floating_point() or not 0 < t.numel() <= MAX_ELEMENTS:
                continue
            d = t.detach().to("cpu", torch.float64).reshape(-1)
            out.append({"name": str(name)[:200], "kind": kind, "shape": [int(s) for s in t.shape],
                        "mean": _num(float(d.mean())), "std": _num(float(d.std())) if d.numel() > 1 else 0.0,
                        "head": [_num(float(v)) for v in d[:HEAD]]})
    except BaseException:  # noqa: BLE001 - the candidate's module (even SystemExit): no summary
        return []
    return out
