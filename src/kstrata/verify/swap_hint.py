"""A feedback hint when the candidate's output is the reference's with two
same-shaped operands exchanged: two parameters (SwiGLU's ``w1`` and ``w3``,
a gate's and an up projection's weights) or two inputs used each where the
other belongs.

Queue round rt82: a SwiGLU that stacked ``[W3; W1]`` and applied SiLU to the
first half computed ``silu(x W3^T) * (x W1^T)``; its feedback said that 99%
of the elements were wrong and where, nothing of the swap. The judge runs the
task's reference (trusted) once per exchanged pair on the failing test's
inputs (:func:`torch.func.functional_call` for parameters: the Model itself
is left as it is) and compares the candidate's outputs with each.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import torch

from kstrata.verify.layout_hint import close

#: at most this many exchanged pairs are run (a Model with many same-shaped layers is not searched)
MAX_PAIRS = 6


def _pairs(named: list[tuple[str, torch.Tensor]]) -> list[tuple[int, int]]:
    """Index pairs of floating tensors of one shape and dtype with different values."""
    out = []
    for (i, (_, a)), (j, (_, b)) in combinations(enumerate(named), 2):
        if (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.is_floating_point()
                and a.shape == b.shape and a.dtype == b.dtype and a.numel() > 1 and not torch.equal(a, b)):
            out.append((i, j))
    return out


def _matches(out: Any, cands: list[torch.Tensor]) -> bool:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return (len(outs) == len(cands) and
            all(isinstance(r, torch.Tensor) and close(c, r, 1e-4) for c, r in zip(cands, outs)))


def swapped_operands_hint(model: torch.nn.Module, inputs: list[Any], outputs: list[Any], device: Any = "cpu"
                          ) -> dict | None:
    """The ``swapped_operands`` feedback item, or None; the parameters as
    :func:`kstrata.verify.approx_hint.gelu_formula_hint`'s (the reference
    ``model`` on ``device``, the failing test's CPU ``inputs`` and the
    candidate's ``outputs``). Said for the first pair (parameters first, then inputs; at most
    :data:`MAX_PAIRS` of them) whose exchange makes the reference's outputs
    equal the candidate's (rtol 1e-4)."""
    from kstrata.verify.feedback import item

    cands = [o for o in outputs if isinstance(o, torch.Tensor)]
    if not cands:
        return None
    args = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
    params = list(model.named_parameters())
    tried = 0
    try:
        with torch.no_grad():
            for i, j in _pairs(params)[:MAX_PAIRS]:
                tried += 1
                (a, ta), (b, tb) = params[i], params[j]
                if _matches(torch.func.functional_call(model, {a: tb, b: ta}, tuple(args)), cands):
                    return item("swapped_operands", "source",
                                f"the output equals the reference's with parameters `{a}` and `{b}` (both of shape "
                                f"{tuple(ta.shape)}) exchanged: the kernel uses each where the other belongs "
                                "(a stacked weight in the wrong order, or the two halves of one GEMM's result "
                                "taken the other way round)", first=a, second=b)
            named_inputs = [(f"input {k}", x) for k, x in enumerate(args)]
            for i, j in _pairs(named_inputs)[:max(MAX_PAIRS - tried, 0)]:
                swapped = list(args)
                swapped[i], swapped[j] = args[j], args[i]
                if _matches(model(*swapped), cands):
                    return item("swapped_operands", "source",
                                f"the output equals the reference's with inputs {i} and {j} (both of shape "
                                f"{tuple(args[i].shape)}) exchanged: the kernel reads each where the other belongs",
                                first=f"input {i}", second=f"input {j}")
    except Exception:  # noqa: BLE001 - a reference that does not run so: no reading
        return None
    return None
