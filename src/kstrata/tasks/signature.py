"""A task's call signature at a shape: its init inputs and input shapes.

This runs the TASK's own code (its ``get_init_inputs``/``get_inputs``: the
reference side, as the judge does), never a candidate's; it lives with the
tasks, not in the CLI, so that kstrata's own process stays free of module
loading by the CLI (tests/sandbox/test_no_candidate_eval_in_parent.py).
"""

from __future__ import annotations

from typing import Any


def _draw(task: Any, shape: dict[str, int]) -> tuple[list[Any], list[Any]]:
    """The task's init inputs and ``get_inputs()`` at ``shape``, inputs drawn on
    the ``meta`` device where the task allows it."""
    import torch

    module = task.load_module(shape)
    init = list(module.get_init_inputs())
    try:
        with torch.device("meta"):
            inputs = list(module.get_inputs())
    except Exception:  # noqa: BLE001 - inputs that need values (resized literal sizes): draw them
        inputs = list(module.get_inputs())
    return init, inputs


def call_signature(task: Any, shape: dict[str, int]) -> tuple[list[Any], list[list[int] | None]]:
    """The task Model's init inputs at ``shape`` and the shapes of ``get_inputs()``
    there (``None`` for an input that is not a tensor), drawn on PyTorch's
    ``meta`` device (no data) where the task's ``get_inputs`` allows it.
    Runs the task's own code, never a candidate's.

    Raises
    ------
    kstrata.tasks.base.TaskError
        If the task module does not load at ``shape``.
    """
    import torch

    init, inputs = _draw(task, shape)
    return init, [list(x.shape) if isinstance(x, torch.Tensor) else None for x in inputs]


def input_dtypes(task: Any, shape: dict[str, int]) -> list[str | None]:
    """The dtype of each of ``get_inputs()`` at ``shape`` as PyTorch names it
    without the ``torch.`` prefix (``"float32"``), ``None`` for an input that is
    not a tensor. Same draw and errors as :func:`call_signature`."""
    import torch

    _, inputs = _draw(task, shape)
    return [str(x.dtype).removeprefix("torch.") if isinstance(x, torch.Tensor) else None for x in inputs]


def input_orders(task: Any, shape: dict[str, int]) -> list[list[int] | None]:
    """The layout of each of ``get_inputs()`` at ``shape``, as the verifier
    passes it to a candidate: its dimensions from the largest stride to the
    smallest (``[1, 0]`` for a transposed matrix), ``None`` for a contiguous
    tensor or an input that is not a tensor. Same draw and errors as
    :func:`call_signature`."""
    import torch

    _, inputs = _draw(task, shape)
    out: list[list[int] | None] = []
    for x in inputs:
        if not isinstance(x, torch.Tensor) or x.is_contiguous():
            out.append(None)
            continue
        out.append(sorted(range(x.dim()), key=lambda d: (-x.stride(d), d)))
    return out


def output_dtypes(task: Any, shape: dict[str, int]) -> list[str] | None:
    """The dtype of each tensor the task's reference ``Model.forward`` returns
    at ``shape`` (``"int8"``, ``"float32"``; a tuple or list of outputs in
    order), from a call on PyTorch's ``meta`` device: no data, no arithmetic.
    Runs the task's own code (its ``Model``), never a candidate's.

    Returns ``None`` where the reference cannot run on ``meta`` (an op without
    a meta kernel, ``.item()`` on a value) or does not load: the caller then
    knows nothing of the outputs (queue round rt78: the quant tolerance line
    stated the int8-code rule and the float metrics together, and a
    float32 fake-quant task's "int8 grid" read as int8 codes)."""
    import torch

    try:
        module = task.load_module(shape)
        with torch.device("meta"):
            model = module.Model(*module.get_init_inputs())
            out = model(*module.get_inputs())
    except Exception:  # noqa: BLE001 - the task's own code; any failure means "not known"
        return None
    outs = out if isinstance(out, (tuple, list)) else [out]
    if not outs or not all(isinstance(x, torch.Tensor) for x in outs):
        return None
    return [str(x.dtype).removeprefix("torch.") for x in outs]
