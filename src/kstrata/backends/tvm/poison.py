"""Poisoned buffers: every buffer a TVM candidate allocates starts with a
known garbage pattern, so a kernel that reads memory it never wrote gives a
wrong (and pattern-dependent) answer instead of whatever the allocator left.

Two places allocate memory when a TVM candidate runs:

* the plan runner (:mod:`kstrata.backends.tvm.runtime`) allocates every
  intermediate and output of the graph with ``torch.empty``; with a pattern
  on, it fills them (:func:`fill_tensor`);
* the compiled PrimFuncs allocate their own buffers (rfactor partials,
  ``cache_read``/``cache_write`` stages, workspaces, ``local`` arrays). A
  *poison build* (:func:`pipeline_name`) appends :func:`poison_pass` to TVM's
  default TIR pipeline: right after each ``AllocBuffer`` it stores the
  pattern into every element. Poison builds are cached separately from the
  normal (timed) build, which is unchanged and pays nothing.

Patterns (:data:`PATTERNS`): ``0`` off; ``1`` NaN for floating point, the
dtype's maximum for integers, ``True`` for ``bool``; ``2`` a large finite
value (``1e30``, or a quarter of the dtype's maximum where that is smaller)
for floating point, bytes ``0x55`` for integers, ``False`` for ``bool``. A
kernel that reads an uninitialized element produces output that depends on
the pattern (NaN under 1, huge under 2), so running each test under pattern
1 and then 2 catches it every time, whatever the memory held before
(``max``-style reductions that skip NaN still see 1e30).

Scope: on CPU (``llvm``) every allocation is poisoned; in GPU device code only
``local`` (per-thread) arrays are, since filling ``shared`` memory from every
thread would need a barrier the pipeline has already placed. The host
function of a GPU build is left alone: its allocations are the kernels'
``global`` workspaces, device memory that host code cannot store into (a
host-side fill of them killed tvm-cuda candidates with SIGSEGV wherever a
PrimFunc kept a global intermediate, e.g. rmsnorm's size-1 test, D=1, on the
H100 on 2026-12-05). A GPU build's ``global`` workspaces are poisoned on the
device instead: before the build, :func:`fill_global_workspaces` puts one
thread-bound fill kernel per such buffer at the head of the PrimFunc, so TVM's
split launches the fills before the PrimFunc's own kernels, on the same stream. A ``source``-level
candidate (edited target code) has no TIR left to instrument: only the plan
runner's buffers are poisoned for it.
"""

from __future__ import annotations

from typing import Any

# the values live backend-neutral (the Triton interpreter uses them too); kept importable from here
from kstrata.backends.poison_values import PATTERNS, check_pattern, fill_value  # noqa: F401


def fill_tensor(t: Any, pattern: int) -> None:
    """Fill torch tensor ``t`` in place with ``pattern`` (no-op for 0 or an empty tensor)."""
    if not pattern or not t.numel():
        return
    name = str(t.dtype).replace("torch.", "")
    t.fill_(fill_value(name, pattern))


class PoisonSwitch:
    """The pattern a backend's loaded callables poison with on their next call
    (shared by the backend and every runner it made; see ``Backend.set_poison``)."""

    def __init__(self) -> None:
        self.pattern = 0


# --------------------------------------------------------------------------- TIR pass
def _fill_stmt(buf: Any, pattern: int) -> Any:
    """Nested serial loops storing the pattern into every element of ``buf``."""
    from tvm import tirx

    dt = str(buf.dtype)
    lanes = int(buf.dtype.lanes) if hasattr(buf.dtype, "lanes") else 1
    scalar_dt = dt.split("x")[0] if lanes > 1 else dt
    value = tirx.const(fill_value(scalar_dt, pattern), scalar_dt)
    if lanes > 1:
        value = tirx.Broadcast(value, lanes)
    loop_vars = [tirx.Var(f"kstrata_poison_i{k}", str(ext.ty)) for k, ext in enumerate(buf.shape)]
    stmt = tirx.BufferStore(buf, value, loop_vars)
    for v, ext in reversed(list(zip(loop_vars, buf.shape))):
        stmt = tirx.For(v, tirx.const(0, str(ext.ty)), ext, tirx.ForKind.SERIAL, stmt)
    return stmt


def _rewrite(stmt: Any, pattern: int, scopes: tuple[str, ...] | None) -> Any:
    from tvm import tirx

    if isinstance(stmt, tirx.SeqStmt):
        out = []
        for s in stmt.seq:
            out.append(_rewrite(s, pattern, scopes))
            if isinstance(s, tirx.AllocBuffer) and _wanted(s.buffer, scopes):
                out.append(_fill_stmt(s.buffer, pattern))
        return tirx.SeqStmt(out)
    if isinstance(stmt, tirx.For):
        return tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, _rewrite(stmt.body, pattern, scopes),
                        stmt.thread_binding, stmt.annotations, stmt.step, stmt.span)
    if isinstance(stmt, tirx.IfThenElse):
        other = _rewrite(stmt.else_case, pattern, scopes) if stmt.else_case is not None else None
        return tirx.IfThenElse(stmt.condition, _rewrite(stmt.then_case, pattern, scopes), other, stmt.span)
    if isinstance(stmt, tirx.AttrStmt):
        return tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, _rewrite(stmt.body, pattern, scopes),
                             stmt.span)
    if isinstance(stmt, tirx.While):
        return tirx.While(stmt.condition, _rewrite(stmt.body, pattern, scopes), stmt.span)
    return stmt


def _wanted(buf: Any, scopes: tuple[str, ...] | None) -> bool:
    dt = str(buf.dtype)
    if dt.startswith("handle") or dt == "void" or not len(buf.shape):
        return False
    return scopes is None or buf.scope() in scopes


def poison_pass(pattern: int) -> Any:
    """A module pass that fills every ``AllocBuffer`` with ``pattern`` right after
    it (CPU functions: every scope; GPU device functions: ``local`` only; the
    host functions of a GPU build: nothing, their buffers are device memory).
    Meant to run after TVM's default TIR pipeline (buffers flattened, placed,
    host and device functions split)."""
    import tvm

    def kind_of(func: Any) -> str:
        target = func.attrs.get("target") if func.attrs is not None else None
        return target.kind.name if target is not None else "llvm"

    @tvm.transform.module_pass(opt_level=0, name="KstrataPoisonAllocations")
    def _pass(mod: Any, _ctx: Any) -> Any:
        prims = [(gv, f) for gv, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc)]
        gpu_build = any(kind_of(f) not in ("llvm", "c") for _, f in prims)
        updates = {}
        for gv, func in prims:
            kind = kind_of(func)
            if kind in ("llvm", "c"):
                if gpu_build:
                    continue  # a GPU build's host code: its allocations live on the device
                scopes = None
            else:
                scopes = ("local",)
            updates[gv] = func.with_body(_rewrite(func.body, pattern, scopes))
        for gv, func in updates.items():
            mod[gv] = func
        return mod

    return _pass


#: threads per block of a device-side fill kernel (:func:`fill_global_workspaces`)
FILL_THREADS = 256


def _device_fill(buf: Any, pattern: int) -> Any:
    """A loop nest bound to ``blockIdx.x``/``threadIdx.x`` storing the pattern
    into every element of ``buf`` (flat index, unravelled over its shape)."""
    import tvm
    from tvm import tirx

    ity = "int64"

    def i64(e: Any) -> Any:
        return e if str(e.ty) == ity else tirx.Cast(ity, e)

    n = tirx.const(1, ity)
    for e in buf.shape:
        n = n * i64(e)
    bx, tx = tirx.Var("kstrata_poison_bx", ity), tirx.Var("kstrata_poison_tx", ity)
    flat = bx * FILL_THREADS + tx
    rest, idx = flat, []
    for e in reversed(list(buf.shape)):
        part = tirx.floormod(rest, i64(e))
        idx.append(part if str(e.ty) == ity else tirx.Cast(str(e.ty), part))
        rest = tirx.floordiv(rest, i64(e))
    idx.reverse()
    dt = str(buf.dtype)
    store = tirx.BufferStore(buf, tirx.const(fill_value(dt, pattern), dt), idx)
    blocks = tirx.floordiv(n + (FILL_THREADS - 1), FILL_THREADS)
    zero, width = tirx.const(0, ity), tirx.const(FILL_THREADS, ity)
    thread = tirx.IterVar(tvm.ir.Range(zero, width), tx, tirx.IterVar.ThreadIndex, "threadIdx.x")
    block = tirx.IterVar(tvm.ir.Range(zero, blocks), bx, tirx.IterVar.ThreadIndex, "blockIdx.x")
    inner = tirx.For(tx, zero, width, tirx.ForKind.THREAD_BINDING, tirx.IfThenElse(flat < n, store, None),
                     thread_binding=thread)
    return tirx.For(bx, zero, blocks, tirx.ForKind.THREAD_BINDING, inner, thread_binding=block)


def fill_global_workspaces(func: Any, pattern: int) -> Any:
    """``func`` (a scheduled TensorIR PrimFunc for a GPU target) with a fill
    kernel per ``global`` buffer its root block allocates, ahead of its body:
    the device-side poison of a GPU build (the host cannot store into device
    memory; see the module docstring). ``func`` unchanged when it allocates no
    such buffer, its body is not a root block, or ``pattern`` is 0 (scalar
    dtypes only: a vector-lane buffer is left as it is)."""
    from tvm import s_tir, tirx

    realize = func.body
    if not pattern or not isinstance(realize, s_tir.stmt.SBlockRealize):
        return func
    blk = realize.block
    bufs = [b for b in blk.alloc_buffers
            if b.scope() == "global" and "x" not in str(b.dtype) and _wanted(b, None)]
    if not bufs:
        return func
    body = tirx.SeqStmt([*(_device_fill(b, pattern) for b in bufs), blk.body])
    new = s_tir.stmt.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint, body, blk.init,
                            blk.alloc_buffers, blk.match_buffers, blk.annotations)
    return func.with_body(s_tir.stmt.SBlockRealize(realize.iter_values, realize.predicate, new))


def pipeline_name(pattern: int) -> str:
    """Name of the registered TIR pipeline that is TVM's default (``s_tir``)
    followed by :func:`poison_pass` for ``pattern`` (registered on first use);
    pass it as ``tvm.tirx.build(..., pipeline=name)``."""
    from tvm.tirx import compilation_pipeline as cp

    name = f"kstrata_poison_{check_pattern(pattern)}"
    if name not in cp.PIPELINE_MAP:
        def factory() -> Any:
            import tvm

            base, host, device = cp.get_tir_pipeline("s_tir")
            return tvm.transform.Sequential([base, poison_pass(pattern)]), host, device

        cp.register_tir_pipeline(name, factory)
    return name
