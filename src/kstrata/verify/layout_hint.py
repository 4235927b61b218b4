"""A feedback hint about the inputs' layout: the task's ``get_inputs()`` gives a non-contiguous
tensor (a transpose, a slice with gaps) and the candidate's wrong output reads as a kernel that
indexed it as row-major (newcomer nc24: a Triton L2 norm that computed ``row * D + col`` on
``torch.randn(D, B).t()`` got wrong values, rows and tiles, and no word of the layout).

The judge sends the candidate its inputs in the task's layout (newcomer nc17), so it knows their
strides; it runs the task's reference (trusted) on each input's memory read as row-major and
compares the candidate's output with that."""

from __future__ import annotations

from typing import Any

import torch


def _row_major_view(x: torch.Tensor) -> torch.Tensor | None:
    """``x``'s memory, from its storage offset, read as a row-major tensor of its shape (what a
    kernel indexing ``i * cols + j`` reads); None where the storage is too short."""
    n = x.untyped_storage().nbytes() // x.element_size()
    if x.storage_offset() + x.numel() > n:
        return None
    return torch.as_strided(x, x.shape, torch.empty(x.shape, dtype=x.dtype, device="meta").stride(),
                            x.storage_offset())


def close(a: torch.Tensor, b: torch.Tensor, rtol: float = 1e-3) -> bool:
    """Whether the candidate's output ``a`` equals a counterfactual reference's ``b`` (same shape;
    within ``rtol`` and 1e-5 of ``b``'s largest magnitude; NaN where NaN)."""
    if a.shape != b.shape:
        return False
    a, b = a.double().cpu(), b.double().cpu()
    scale = float(b.abs().max()) if b.numel() else 0.0
    return bool(torch.allclose(a, b, rtol=rtol, atol=1e-5 * max(scale, 1e-30), equal_nan=True))


def layout_hint(model: torch.nn.Module, inputs: list[Any], outputs: list[Any], share: float,
                device: Any = "cpu") -> dict | None:
    """The ``layout`` feedback item, or None.

    Parameters
    ----------
    model : the task's Model (the reference), on ``device``.
    inputs : the failing test's inputs, on the CPU, in the layout ``get_inputs()`` gave them.
    outputs : the candidate's outputs of that test (CPU tensors, row-major), in order.
    share : the wrong elements' share (0 to 1) of the first failing output.

    Said when some floating input of two or more dimensions is not contiguous and either the
    candidate's outputs equal the reference's on those inputs' memory read as row-major (a
    kernel that ignores the strides), or nearly all of it is wrong (at least 90%: then as a possibility)."""
    from kstrata.verify.feedback import item

    odd = [(i, x) for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.dim() >= 2
           and x.numel() > 1 and not x.is_contiguous()]
    if not odd:
        return None
    named = "; ".join(f"input {i} (shape {tuple(x.shape)}) has strides {tuple(x.stride())}"
                      + (" (a transpose)" if x.t().is_contiguous() and x.dim() == 2 else "") for i, x in odd)
    flat = [i for i, x in odd if _row_major_view(x) is not None]
    if flat:
        swapped = list(inputs)
        for i in flat:
            swapped[i] = _row_major_view(inputs[i]).contiguous()
        try:
            with torch.no_grad():
                out = model(*[x.to(device) if isinstance(x, torch.Tensor) else x for x in swapped])
        except Exception:  # noqa: BLE001 - the reference may not take such values (a domain): no reading
            out = None
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        cands = [o for o in outputs if isinstance(o, torch.Tensor)]
        if out is not None and cands and len(cands) == len(outs) and all(
                isinstance(r, torch.Tensor) and close(c, r) for c, r in zip(cands, outs)):
            return item("layout", "source",
                        f"the output is what the reference gives on the inputs' memory read as row-major: {named}, "
                        "and the kernel indexes it as if contiguous (row * cols + col). Use the input's strides "
                        "(x.stride()) in the indexing, or make it contiguous first (x.contiguous(), a copy)",
                        inputs=[i for i, _ in odd], matches_row_major=True)
    if share < 0.9:
        return None
    return item("layout", "source",
                f"the task's inputs are not contiguous: {named}. A kernel that indexes an input as row-major "
                "(row * cols + col) reads other elements than the reference; use x.stride() or x.contiguous()",
                inputs=[i for i, _ in odd], matches_row_major=False)
