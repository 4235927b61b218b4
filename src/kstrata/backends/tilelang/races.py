"""Blocks of one TileLang kernel that store to one element of a global buffer.

On ``tilelang-c`` the blocks of a ``T.Kernel`` run one after another in one
thread (a plain loop over the block index), so a kernel whose blocks add
into one output element with a plain read and write (a split reduction
without ``T.atomic_add``: lost updates on a GPU) read correct, 54 public and
139 hidden tests (red-team 2026-12-04, case rt47; the Triton interpreter's
form of it is :mod:`kstrata.backends.triton.fidelity`). The C code cannot be
watched element by element, so the program is read before it is lowered:
:func:`block_race` finds a store to a kernel parameter (a ``BufferStore``, or
the destination region of ``T.copy``/``T.fill``/...) whose element does not
depend on a block index of extent > 1 and is not under a condition on it,
i.e. blocks that differ only in that index write the same element. An index
read from memory (``Y[idx[0]]``) is not judged; atomics (``T.atomic_*``) are
not stores. The rule assumes blocks that write one element write different
values (the same constant from every block would be flagged).
"""

from __future__ import annotations

from typing import Any


class BlockRace(RuntimeError):
    """Blocks of one TileLang kernel store to one element without an order
    between them on a GPU (see :func:`block_race`)."""


def _vars(expr: Any, tirx: Any) -> tuple[list[Any], bool]:
    """The variables ``expr`` reads, and whether it loads from a buffer."""
    found: list[Any] = []
    loads = [False]

    def visit(node: Any) -> None:
        if isinstance(node, tirx.Var):
            found.append(node)
        elif isinstance(node, tirx.BufferLoad):
            loads[0] = True

    tirx.stmt_functor.post_order_visit(expr, visit)
    return found, loads[0]


def block_race(func: Any) -> str | None:
    """Why blocks of ``func`` (a TileLang ``PrimFunc`` before lowering, as
    ``JITKernel.prim_func`` holds it) may store to one element of a parameter
    buffer, or ``None``. Must run where TileLang's ``tvm`` imports."""
    from tilelang import tvm  # noqa: F401 - TileLang's bundled TVM, imported before its modules
    from tvm import tirx

    params = [b.data for b in func.buffer_map.values()]
    bind, let = getattr(tirx, "Bind", None), getattr(tirx, "LetStmt", None)  # TVM 0.27: Bind; older: LetStmt

    def is_param(buf: Any) -> bool:
        return any(buf.data.same_as(p) for p in params)

    def depends(expr_vars: list[Any], deps: list[tuple[Any, list[Any]]], v: Any, seen: int = 0) -> bool:
        """Whether any of ``expr_vars`` is ``v`` or (through loop bounds and lets in ``deps``) reads it."""
        for x in expr_vars:
            if x.same_as(v):
                return True
            if seen < 8:
                for var, via in deps:
                    if x.same_as(var) and depends(via, deps, v, seen + 1):
                        return True
        return False

    def check(buf: Any, indices: list[Any], blocks: list[tuple[Any, Any]], guards: list[Any],
              deps: list[tuple[Any, list[Any]]]) -> str | None:
        idx_vars: list[Any] = []
        for i in indices:
            vs, loads = _vars(i, tirx)
            if loads:
                return None
            idx_vars += vs
        guard_vars: list[Any] = []
        for g in guards:
            guard_vars += _vars(g, tirx)[0]
        for v, extent in blocks:
            if isinstance(extent, tirx.IntImm) and extent.value <= 1:
                continue
            if not depends(idx_vars, deps, v) and not depends(guard_vars, deps, v):
                where = ", ".join(str(i) for i in indices)
                return (f"blocks that differ only in {v.name} (extent {extent}) store to the same element of "
                        f"{buf.name} ({buf.name}[{where}]) with a plain store: on a GPU "
                        "they run at once and race (tilelang-c runs blocks one after another); use T.atomic_add "
                        "or one block per output element")
        return None

    def regions(call: Any, out: list[Any]) -> None:
        def visit(node: Any) -> None:
            if isinstance(node, tirx.Call) and str(getattr(node.op, "name", "")).endswith("region") \
                    and len(node.args) >= 2 and isinstance(node.args[0], tirx.BufferLoad) \
                    and isinstance(node.args[1], tirx.IntImm) and node.args[1].value & 2:
                out.append(node.args[0])
        tirx.stmt_functor.post_order_visit(call, visit)

    def walk(s: Any, blocks: list[tuple[Any, Any]], guards: list[Any], deps: list[tuple[Any, list[Any]]]) -> str | None:
        if isinstance(s, tirx.SeqStmt):
            for x in s.seq:
                if bind is not None and isinstance(x, bind):  # a binding for the statements after it
                    deps = deps + [(x.var, _vars(x.value, tirx)[0])]
                    continue
                r = walk(x, blocks, guards, deps)
                if r:
                    return r
            return None
        if isinstance(s, tirx.For):
            tag = getattr(getattr(s, "thread_binding", None), "thread_tag", "") or ""
            if s.kind == tirx.ForKind.THREAD_BINDING and tag.startswith("blockIdx"):
                return walk(s.body, blocks + [(s.loop_var, s.extent)], guards, deps)
            via = _vars(s.min, tirx)[0] + _vars(s.extent, tirx)[0]
            return walk(s.body, blocks, guards, deps + [(s.loop_var, via)])
        if isinstance(s, tirx.IfThenElse):
            r = walk(s.then_case, blocks, guards + [s.condition], deps)
            if r or s.else_case is None:
                return r
            return walk(s.else_case, blocks, guards + [s.condition], deps)
        if let is not None and isinstance(s, let):
            return walk(s.body, blocks, guards, deps + [(s.var, _vars(s.value, tirx)[0])])
        if isinstance(s, tirx.BufferStore):
            return check(s.buffer, list(s.indices), blocks, guards, deps) if is_param(s.buffer) else None
        if isinstance(s, tirx.Evaluate):
            if isinstance(s.value, tirx.Call) and "atomic" in str(getattr(s.value.op, "name", "")):
                return None
            dst: list[Any] = []
            regions(s.value, dst)
            for load in dst:
                if is_param(load.buffer):
                    r = check(load.buffer, list(load.indices), blocks, guards, deps)
                    if r:
                        return r
            return None
        if isinstance(s, tirx.SBlockRealize):
            return walk(s.block, blocks, guards + [s.predicate], deps)
        for attr in ("body", "init"):
            sub = getattr(s, attr, None)
            if sub is not None:
                r = walk(sub, blocks, guards, deps)
                if r:
                    return r
        return None

    return walk(func.body, [], [], [])


def watch_block_races() -> bool:
    """Make the first call of every TileLang kernel raise :class:`BlockRace`
    when :func:`block_race` finds blocks that store to one element
    (idempotent). Call before candidate code runs, in the TileLang
    environment's process. Returns False when TileLang is not importable."""
    try:
        from tilelang.jit.kernel import JITKernel
    except ImportError:
        return False
    orig = JITKernel.__dict__["__call__"]
    if getattr(orig, "_kstrata_races", False):
        return True

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.__dict__.get("_kstrata_races_checked"):
            self._kstrata_races_checked = True
            func = getattr(self, "prim_func", None)
            why = block_race(func) if func is not None and hasattr(func, "buffer_map") else None
            if why:
                self._kstrata_race = why
        if self.__dict__.get("_kstrata_race"):
            raise BlockRace(self._kstrata_race)
        return orig(self, *args, **kwargs)

    call._kstrata_races = True  # type: ignore[attr-defined]
    JITKernel.__call__ = call
    return True
