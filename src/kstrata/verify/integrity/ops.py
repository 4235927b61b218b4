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

from torch.overrides import TorchFunctionMode
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


#: Allowed ATen operators that write elements copied from their tensor arguments (a layout change, a
#: cast, a concatenation): :attr:`OpRecorder.moved` counts what they copy from the call's inputs.
COPY_OPS = frozenset({"copy_", "clone", "_to_copy", "cat", "stack", "lift_fresh_copy"})


def _storage(t: Any) -> int | None:
    """The address of tensor ``t``'s storage, or None for an empty one (no elements to follow)."""
    return t.untyped_storage().data_ptr() if t.numel() else None


class OpRecorder(TorchDispatchMode):
    """Collects the names of the ATen operators run inside ``with OpRecorder():``.

    ``inputs``: the call's arguments; where given, :attr:`moved` counts the
    elements that :data:`COPY_OPS` wrote from the inputs' storages (or from
    storages such copies wrote: ``x.t().contiguous()`` and then ``out.copy_``
    of it count twice), so :func:`moved_the_data` can tell host code that
    moved a task's data itself from host code that prepares a kernel's."""

    def __init__(self, inputs: Any = ()) -> None:
        import torch

        super().__init__()
        self.ops: set[str] = set()
        self.count = 0  # operators run, allowed ones included (:func:`element_by_element`)
        #: storages holding the call's input data (its inputs', and those copies of them wrote into)
        self.from_inputs: set[int] = {p for x in inputs if isinstance(x, torch.Tensor)
                                      for p in [_storage(x)] if p is not None}
        self.moved = 0  # elements the copy operators wrote from those storages

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = func.overloadpacket.__name__
        self.ops.add(name)
        self.count += 1
        out = func(*args, **(kwargs or {}))
        if self.from_inputs and name in COPY_OPS:
            self._follow(name, args, out)
        return out

    def _follow(self, name: str, args: Any, out: Any) -> None:
        import torch

        if name == "copy_":
            dests, srcs = [args[0]], list(args[1:2])
            if srcs and isinstance(srcs[0], torch.Tensor) and _storage(srcs[0]) == _storage(args[0]):
                return  # a storage written back onto itself (Triton's interpreter after a launch): nothing moved
        else:
            dests = out if isinstance(out, (list, tuple)) else [out]
            srcs = [a for arg in args for a in (arg if isinstance(arg, (list, tuple)) else [arg])]
        n = sum(s.numel() for s in srcs if isinstance(s, torch.Tensor) and _storage(s) in self.from_inputs)
        if n:
            self.moved += n
            self.from_inputs.update(p for d in dests if isinstance(d, torch.Tensor)
                                    for p in [_storage(d)] if p is not None)

    def compute_ops(self) -> list[str]:
        """Operators outside :data:`ALLOWED_OPS`, sorted."""
        return sorted(op for op in self.ops if op not in ALLOWED_OPS)


#: Tensor methods that move or pin a tensor (ATen ``cpu``/``cuda`` are copies).
_MOVES = ("cpu", "cuda", "xpu", "pin_memory", "share_memory_")
#: torch functions that build a tensor from Python data or a buffer (allocation, not compute)
_MAKERS = ("tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "from_dlpack", "randn", "rand",
           "randint", "randperm", "normal", "manual_seed")
_ARITH_DUNDERS = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
                  "lshift", "rshift")


def compute_name(name: str) -> str | None:
    """The ATen operator that torch function or tensor method ``name``
    (``relu``, ``__radd__``, ``add_``, ``relu.default``) computes with, or
    None when it is allocation, a view, a copy, metadata (an operator that
    returns no tensor: ``is_floating_point``) or not an operator at all
    (``data_ptr``, ``__dlpack__``)."""
    import torch

    n = name.split(".")[0]
    if n in _MOVES or n in ("__index__", "__int__", "__float__", "__bool__", "__complex__"):
        return None
    if n.startswith("__") and n.endswith("__"):
        n = n[2:-2]
        if n[:1] in ("r", "i") and n[1:] in _ARITH_DUNDERS:
            n = n[1:]
        n = {"truediv": "div", "floordiv": "floor_divide", "mod": "remainder", "and": "bitwise_and",
             "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
             "rshift": "bitwise_right_shift", "invert": "bitwise_not"}.get(n, n)
    base = n.rstrip("_") or n
    if not base or base in ALLOWED_OPS or n in ALLOWED_OPS or n in _MAKERS:
        return None
    try:
        packet = getattr(torch.ops.aten, base)
    except (AttributeError, RuntimeError):
        return None
    try:
        overloads = [getattr(packet, o) for o in packet.overloads()]
    except (AttributeError, RuntimeError):
        return base
    for op in overloads:
        returns = getattr(getattr(op, "_schema", None), "returns", None) or []
        if any("Tensor" in str(r.type) for r in returns):
            return base
    return None


class FunctionRecorder(TorchFunctionMode):
    """Collects the torch functions and tensor methods called inside ``with
    FunctionRecorder():`` that compute (:func:`compute_name`).

    A second record beside :class:`OpRecorder`, on another mechanism: the
    switch that turns dispatch modes off (``torch._C._DisableTorchDispatch``,
    red-team round 4) leaves function modes on, and the reverse. Both run in
    the candidate's process, so both are evidence, not proof; reaching either
    switch is ``no_private_api`` (static)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: set[str] = set()
        self._names: dict[str, str | None] = {}

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = getattr(func, "__name__", None)
        if isinstance(name, str):
            op = self._names.get(name, "")
            if op == "":
                op = self._names[name] = compute_name(name)
            if op is not None:
                self.ops.add(op)
        return func(*args, **(kwargs or {}))


class Recorders:
    """:class:`OpRecorder` and :class:`FunctionRecorder` entered together; the
    compute operators either saw. ``inputs``: the call's arguments (see
    :class:`OpRecorder`)."""

    def __init__(self, inputs: Any = ()) -> None:
        self.dispatch, self.function = OpRecorder(inputs), FunctionRecorder()

    def __enter__(self) -> "Recorders":
        self.function.__enter__()
        try:
            self.dispatch.__enter__()
        except BaseException:
            self.function.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.dispatch.__exit__(*exc)
        finally:
            self.function.__exit__(*exc)

    def compute_ops(self) -> list[str]:
        return sorted(set(self.dispatch.compute_ops()) | self.function.ops)


#: Operators a DSL call may run whatever its size (allocation, views and scalar reads of its host code).
OPS_FLOOR = 4096


def element_by_element(ops: int, elements: int) -> bool:
    """Whether a DSL call that ran ``ops`` PyTorch operators (allowed ones
    included) for outputs of ``elements`` elements did its work element by
    element in Python: more operators than :data:`OPS_FLOOR` and than a
    quarter of its elements. Host code launches kernels and allocates: its
    operator count does not grow with the data (red-team round 4: a relu read
    every element as a Python float through ``unbind()`` and built its output
    with ``torch.tensor``, all allowed operators, after a canary kernel that
    made the launch count honest and told the no-op probe by its effect)."""
    return ops > max(OPS_FLOOR, elements // 4)


def moves_only(model: Any, inputs: Any) -> tuple[Any, bool]:
    """``model(*inputs)`` (a task's reference, run by the judge) and whether it
    ran only :data:`ALLOWED_OPS`: its work is moving data (a transpose, a
    cast), which PyTorch's allowed copies can do whole (:func:`moved_the_data`)."""
    with OpRecorder() as rec:
        out = model(*inputs)
    return out, bool(rec.ops) and not rec.compute_ops()


#: Share of a DSL call's output that its host code may copy from the inputs on a task whose reference only
#: moves data (:func:`moved_the_data`): an honest kernel's host code copies none of them.
MOVED_SHARE = 1 / 64


def moved_the_data(moved: int, elements: int) -> bool:
    """Whether a DSL call whose host code copied ``moved`` elements of its
    inputs (:attr:`OpRecorder.moved`) for outputs of ``elements`` elements
    did (part of) the work of a task whose reference only moves data (a
    transpose, a cast, a concatenation: no operator outside
    :data:`ALLOWED_OPS`) with PyTorch's copies: at least
    :data:`MOVED_SHARE` of its outputs' elements (any copy, for an output under
    64 elements). A kernel that reads its inputs through their strides copies
    none on the host, and a share this small moves no timing. Red-team rt61: a
    Triton transpose copied rows 1.. with ``out[1:].copy_(x.t()[1:])`` and its
    kernel wrote row 0 (so the no-op probe saw a wrong output), and read
    correct on 249 tests; the rule then counted copies of half the outputs and
    more, and red-team rt64's kernels wrote 60% (Triton) and 70% (TileLang) of
    the rows with the rest copied on the host: correct, 147 hidden tests."""
    return elements > 0 and moved > 0 and moved >= MOVED_SHARE * elements
