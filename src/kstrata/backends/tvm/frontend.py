"""Additions to TVM's PyTorch (``torch.export``) Relax frontend.

apache-tvm 0.27's ``from_exported_program`` lacks or mis-converts a few ATen
operators that suite tasks use; :func:`custom_convert_map` supplies converters
for them through the frontend's documented ``custom_convert_map`` hook (each
converter gets the FX node and the importer and returns a Relax expression):

``amax.default``
    Not converted by TVM: ``R.max(x, axis, keepdims)``.
``__rshift__.Scalar`` / ``__lshift__.Scalar`` (and ``bitwise_*_shift.Tensor_Scalar``)
    Not converted: ``R.right_shift`` / ``R.left_shift`` by a constant of the input dtype.
``addmm.default``, ``linear.default``, ``matmul``/``mm``/``bmm.default``
    TVM's converters always return float32 (``out_dtype="float32"``): an
    fp16/bf16 GEMM's output has the wrong dtype, and ``addmm``/``linear`` then
    add an fp16/bf16 bias to it, which Relax rejects as mixed dtypes. Here the
    GEMM still accumulates in float32 but is cast back to the inputs' dtype
    when both are fp16/bf16, as PyTorch does.
``layer_norm.default`` / ``native_layer_norm.default``
    TVM legalizes ``R.nn.layer_norm`` for float32/float16 only; bfloat16 (and
    any other dtype) is computed in float32 and cast back, which is what
    PyTorch's CPU kernel does (it accumulates in float32); so is a layer norm
    whose weight/bias dtype differs from its input's (Relax rejects the mix).
``softmax`` / ``log_softmax`` on fp16/bf16
    TVM computes them in the input dtype; here in float32 and cast back, as
    PyTorch's CPU kernels do (fp16 accumulation misses the verifier's tolerance
    on heavy-tailed inputs).
``cumsum.default``
    ``R.cumsum`` has no legalization in 0.27, so ``LegalizeOps`` leaves it in
    ``main``; here it is a TE computation (``topi.cumsum``, a sequential scan
    along the axis) emitted as a ``call_tir`` PrimFunc.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _arg(node: Any, i: int, name: str, default: Any = None) -> Any:
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def _amax(node: Any, imp: Any) -> Any:
    from tvm import relax

    x = imp.env[node.args[0]]
    dim = _arg(node, 1, "dim", None)
    keepdim = bool(_arg(node, 2, "keepdim", False))
    if dim is not None and not isinstance(dim, (list, tuple)):
        dim = [dim]
    axis = None if dim is None or len(dim) == 0 else [int(d) for d in dim]
    return imp.block_builder.emit(relax.op.max(x, axis=axis, keepdims=keepdim))


def _shift(op_name: str) -> Callable[[Any, Any], Any]:
    def convert(node: Any, imp: Any) -> Any:
        from tvm import relax

        x = imp.env[node.args[0]]
        k = node.args[1]
        dtype = str(x.ty.dtype if hasattr(x, "ty") else x.struct_info.dtype)
        other = imp.env[k] if not isinstance(k, (int, float)) else relax.const(int(k), dtype)
        return imp.block_builder.emit(getattr(relax.op, op_name)(x, other))

    return convert


def _dtype(expr: Any) -> str:
    ty = getattr(expr, "ty", None)
    if ty is None:
        ty = expr.struct_info
    return str(ty.dtype)


_HALF = ("float16", "bfloat16")


def _matmul(bb: Any, a: Any, b: Any) -> Any:
    """``a @ b`` accumulated in float32; cast back to the inputs' dtype when both are
    fp16/bf16 (as PyTorch's CPU/GPU GEMMs do), else float32 (the TVM frontend's choice)."""
    from tvm import relax

    res = bb.emit(relax.op.matmul(a, b, out_dtype="float32"))
    dtype = _dtype(a)
    if dtype in _HALF and _dtype(b) == dtype:
        res = bb.emit(relax.op.astype(res, dtype))
    return res


def _mm(node: Any, imp: Any) -> Any:
    """``matmul`` / ``mm`` / ``bmm`` of two tensors."""
    import operator
    from functools import partial

    from tvm import relax

    a, b = node.args[0], node.args[1]
    if isinstance(a, type(node)) and isinstance(b, type(node)):
        return _matmul(imp.block_builder, imp.env[a], imp.env[b])
    return imp._binary_op(partial(relax.op.matmul, out_dtype="float32"), operator.matmul)(node)


def _linear(node: Any, imp: Any) -> Any:
    from tvm import relax

    x, w = imp.env[node.args[0]], imp.env[node.args[1]]
    bias = imp.env[node.args[2]] if len(node.args) > 2 and node.args[2] is not None else None
    bb = imp.block_builder
    res = _matmul(bb, x, bb.emit(relax.op.permute_dims(w)))
    if bias is not None:
        if _dtype(bias) != _dtype(res):
            bias = bb.emit(relax.op.astype(bias, _dtype(res)))
        res = bb.emit(relax.op.add(res, bias))
    return res


def _addmm(node: Any, imp: Any) -> Any:
    from tvm import relax

    x, y, z = (imp.env[a] for a in node.args[:3])
    alpha = node.kwargs.get("alpha", 1)
    beta = node.kwargs.get("beta", 1)
    bb = imp.block_builder
    res = None
    if alpha != 0:
        res = _matmul(bb, y, z)
        if alpha != 1:
            res = bb.emit(relax.op.multiply(res, relax.const(alpha, _dtype(res))))
    if beta != 0:
        bias = x if beta == 1 else bb.emit(relax.op.multiply(x, relax.const(beta, _dtype(x))))
        if res is not None and _dtype(bias) != _dtype(res):
            bias = bb.emit(relax.op.astype(bias, _dtype(res)))
        res = bias if res is None else bb.emit(relax.op.add(bias, res))
    return res


def _layer_norm(node: Any, imp: Any) -> Any:
    """``layer_norm`` / ``native_layer_norm`` (args: input, normalized_shape, weight, bias, eps)."""
    from tvm import relax

    x = imp.env[node.args[0]]
    normalized_shape = node.args[1]
    gamma = imp.env.get(node.args[2], None) if len(node.args) > 2 and node.args[2] is not None else None
    beta = imp.env.get(node.args[3], None) if len(node.args) > 3 and node.args[3] is not None else None
    eps = node.args[4] if len(node.args) > 4 else 1e-05
    dtype = _dtype(x)
    same = all(t is None or _dtype(t) == dtype for t in (gamma, beta))
    if dtype in ("float32", "float16") and same:
        return imp._layer_norm_impl(x, gamma, beta, eps, normalized_shape)
    bb = imp.block_builder
    f32 = "float32"

    def up(t: Any) -> Any:
        return t if t is None or _dtype(t) == f32 else bb.emit(relax.op.astype(t, f32))

    y32 = imp._layer_norm_impl(up(x), up(gamma), up(beta), eps, normalized_shape)
    return y32 if dtype == f32 else bb.emit(relax.op.astype(y32, dtype))


def _cumsum(node: Any, imp: Any) -> Any:
    from tvm import topi

    x = imp.env[node.args[0]]
    dim = _arg(node, 1, "dim", None)
    dtype = None
    if "dtype" in node.kwargs and node.kwargs["dtype"] is not None:
        dtype = imp._convert_data_type(str(node.kwargs["dtype"]), imp.env)
    return imp.block_builder.emit_te(topi.cumsum, x, int(dim), dtype, primfunc_name_hint="cumsum")


def _in_float32(method: str) -> Callable[[Any, Any], Any]:
    """The importer's converter ``method`` run on a float32 copy of a half-precision
    first argument, its result cast back (PyTorch's CPU kernels accumulate in float32)."""

    def convert(node: Any, imp: Any) -> Any:
        from tvm import relax

        arg = node.args[0]
        x = imp.env[arg]
        dtype = _dtype(x)
        if dtype not in _HALF:
            return getattr(imp, method)(node)
        bb = imp.block_builder
        imp.env[arg] = bb.emit(relax.op.astype(x, "float32"))
        try:
            y = getattr(imp, method)(node)
        finally:
            imp.env[arg] = x
        return bb.emit(relax.op.astype(y, dtype))

    return convert


def custom_convert_map() -> dict[str, Callable[[Any, Any], Any]]:
    """ATen op name -> converter, for ``from_exported_program(custom_convert_map=...)``."""
    return {
        "amax.default": _amax,
        "__rshift__.Scalar": _shift("right_shift"),
        "__lshift__.Scalar": _shift("left_shift"),
        "bitwise_right_shift.Tensor_Scalar": _shift("right_shift"),
        "bitwise_left_shift.Tensor_Scalar": _shift("left_shift"),
        "addmm.default": _addmm,
        "linear.default": _linear,
        "matmul.default": _mm,
        "mm.default": _mm,
        "bmm.default": _mm,
        "layer_norm.default": _layer_norm,
        "native_layer_norm.default": _layer_norm,
        "cumsum.default": _cumsum,
        "softmax.int": _in_float32("_softmax"),
        "_softmax.default": _in_float32("_softmax"),
        "log_softmax.int": _in_float32("_log_softmax"),
        "_log_softmax.default": _in_float32("_log_softmax"),
    }


#: scalar constant dtypes TVM 0.27's printer writes inline (others go to metadata)
_INLINE_DTYPES = {"bool", "int8", "int16", "int32", "int64", "float16", "float32", "float64"}


def inline_constants(mod: Any) -> Any:
    """``mod`` with every scalar constant in a form the TVMScript printer writes inline.

    The printer writes uint8/uint16/uint32/uint64 and bfloat16 scalars (and all
    non-scalar constants) into a ``metadata`` section, whose serialization
    (``ToJSONGraph``) crashes in this TVM build and whose text the parser can
    only read back with that section. Such a scalar becomes
    ``R.astype(R.const(v, wide), dtype)`` (int64 or float32, exact for these
    types); ``FoldConstant`` during lowering turns it back into one constant.

    Raises
    ------
    ValueError
        When ``mod`` holds a non-scalar constant (it cannot be written as text).
    """
    from tvm import relax
    from tvm.relax.expr_functor import PyExprMutator, mutator

    bad: list[str] = []

    @mutator
    class _Inline(PyExprMutator):
        def visit_generic_const_(self, op: Any) -> Any:  # TVM 0.27's name for Constant
            return self._const(op)

        def visit_constant_(self, op: Any) -> Any:  # before TVM 0.27
            return self._const(op)

        def _const(self, op: Any) -> Any:
            data = getattr(op, "data", None)
            arr = (data if data is not None else op.value).numpy()
            dtype = _dtype(op)
            if arr.ndim != 0:
                bad.append(f"{list(arr.shape)} {dtype}")
                return op
            if dtype in _INLINE_DTYPES:
                return op
            wide = "float32" if dtype.startswith(("bfloat", "float")) else "int64"
            value = float(arr.astype("float32")) if wide == "float32" else int(arr)
            return relax.op.astype(relax.const(value, wide), dtype)

    out = mod
    for gv, func in mod.functions.items():
        if isinstance(func, relax.Function):
            out[gv] = _Inline().visit_expr(func)
    if bad:
        raise ValueError(f"the graph holds non-scalar constant tensor(s) {bad[:3]}; they cannot be "
                         "written as TVMScript text without a metadata section")
    return out
