"""Run-time record of the PyTorch operators a DSL candidate executes.

A static check finds ``torch.softmax(x)`` in a Triton candidate, but not the
same op reached through an ``nn.Softmax()`` module, a ``functools.partial`` or
a module-level object. At run time every ATen operator goes through the
dispatcher, so a :class:`~torch.utils._python_dispatch.TorchDispatchMode`
sees them all, however they were reached; DSL kernels (Triton, TVM, TileLang)
take raw pointers and never do. What a DSL candidate's host code may run is
allocation, views, copies and casts: :data:`ALLOWED_OPS`.
"""

from __future__ import annotations

from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

#: ATen operator packets a DSL candidate may execute: allocation, filling,
#: views, layout copies and casts (no arithmetic, reductions or matmuls).
ALLOWED_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "fill_", "zero_",
    "fill", "scalar_tensor", "arange", "lift_fresh", "lift_fresh_copy", "detach", "alias",
    "view", "_unsafe_view", "reshape", "_reshape_alias", "view_as", "as_strided", "t", "transpose",
    "permute", "expand", "expand_as", "unsqueeze", "squeeze", "flatten", "unflatten", "slice",
    "select", "narrow", "split", "split_with_sizes", "unbind", "chunk", "contiguous", "clone",
    "copy_", "_to_copy", "to", "cat", "stack", "resize_", "set_", "_local_scalar_dense", "item",
    "is_same_size", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "size", "stride",
    "numel", "dim", "is_contiguous", "_has_compatible_shallow_copy_type", "record_stream",
    "view_as_real", "view_as_complex", "_conj", "conj", "resolve_conj", "resolve_neg", "equal",
})


class OpRecorder(TorchDispatchMode):
    """Collects the names of the ATen operators run inside ``with OpRecorder():``."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: set[str] = set()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops.add(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))

    def compute_ops(self) -> list[str]:
        """Operators outside :data:`ALLOWED_OPS`, sorted."""
        return sorted(op for op in self.ops if op not in ALLOWED_OPS)
