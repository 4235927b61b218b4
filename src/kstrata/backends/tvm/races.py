"""Iterations of a parallel or block-bound loop that store to one element of a TVM PrimFunc's buffer.

A hand-written PrimFunc in a candidate's graph (``@T.prim_func`` called with
``R.call_tir``) is built as written: TVM's schedule primitives refuse to
parallelize a loop a reduction runs over, but nothing checks TIR that comes
parallel already. A row sum whose reduction loop was ``T.parallel``, each
iteration adding into ``y[i]`` with a plain read and write (lost updates
whenever two threads add at once), read correct on ``tvm-llvm`` wherever the
race did not show in the judge's runs (red-team 2026-12-05, case rt50: a race
whose window is one addition per chunk of the row seldom shows on 2 CPUs),
and the same on ``tvm-cuda`` over ``blockIdx``. :func:`parallel_race` finds a
store to a buffer of the PrimFunc whose indices, and every condition around
it, do not depend on an enclosing ``parallel`` or ``blockIdx``-bound loop of
extent other than 1: every iteration of that loop then stores to the same
element. The dependence is syntactic, through block bindings and let
bindings (an index ``i + 0 * j`` reads as depending on ``j``), so only such
plain races are found; ``threadIdx``-bound reductions are left to TVM's
cross-thread lowering. The TileLang form of this check is
:mod:`kstrata.backends.tilelang.races`.
"""

from __future__ import annotations

from typing import Any


class ParallelRace(RuntimeError):
    """Iterations of a parallel loop store to one element (see :func:`parallel_race`)."""


def parallel_race(func: Any) -> str | None:
    """Why iterations of a parallel or ``blockIdx``-bound loop of ``func`` (a
    ``tvm.tirx.PrimFunc``, scheduled or as written) store to the same element
    of one of its buffers, or ``None`` (module docstring for the rule)."""
    from tvm import tirx
    from tvm.tirx.analysis import undefined_vars

    try:
        from tvm import s_tir
    except ImportError:  # a TVM without s_tir blocks
        s_tir = None
    # the data of the buffers the PrimFunc allocates (the others are its parameters')
    local: list[Any] = []

    def allocations(s: Any) -> None:
        if s is None:
            return
        for b in list(getattr(s, "alloc_buffers", None) or []) + \
                ([s.buffer] if isinstance(s, (tirx.AllocBuffer, tirx.DeclBuffer)) else []):
            local.append(b.data)
        for attr in ("body", "block", "init", "then_case", "else_case"):
            allocations(getattr(s, attr, None))
        for x in getattr(s, "seq", None) or []:
            allocations(x)

    allocations(func.body)

    def deps(expr: Any, env: dict[Any, frozenset]) -> frozenset:
        """The loop variables ``expr`` depends on (through the bindings in ``env``)."""
        out: set = set()
        for v in undefined_vars(expr):
            out |= env.get(v, {v})
        return frozenset(out)

    def walk(s: Any, env: dict[Any, frozenset], loops: list[tuple[Any, str]], guards: frozenset) -> str | None:
        if s is None:
            return None
        if isinstance(s, tirx.SeqStmt):
            for x in s.seq:
                if isinstance(x, tirx.Bind):  # a binding for the statements after it
                    env = {**env, x.var: deps(x.value, env)}
                    continue
                r = walk(x, env, loops, guards)
                if r:
                    return r
            return None
        if isinstance(s, tirx.For):
            kind = ""
            if s.kind == tirx.ForKind.PARALLEL:
                kind = "parallel"
            elif s.kind == tirx.ForKind.THREAD_BINDING:
                tag = getattr(getattr(s, "thread_binding", None), "thread_tag", "") or ""
                kind = tag if tag.startswith("blockIdx") else ""
            one = isinstance(s.extent, tirx.IntImm) and s.extent.value <= 1
            return walk(s.body, env, loops + ([(s.loop_var, kind)] if kind and not one else []), guards)
        if isinstance(s, tirx.IfThenElse):
            g = guards | deps(s.condition, env)
            return walk(s.then_case, env, loops, g) or walk(s.else_case, env, loops, g)
        if isinstance(s, tirx.LetStmt):
            return walk(s.body, {**env, s.var: deps(s.value, env)}, loops, guards)
        if s_tir is not None and isinstance(s, s_tir.SBlockRealize):
            block = s.block
            env = {**env, **{iv.var: deps(val, env) for iv, val in zip(block.iter_vars, s.iter_values)}}
            g = guards | deps(s.predicate, env)
            return walk(block.init, env, loops, g) or walk(block.body, env, loops, g)
        if isinstance(s, tirx.BufferStore):
            if any(s.buffer.data.same_as(a) for a in local) or s.buffer.scope() != "global":
                return None  # the PrimFunc's own buffer; a shared or local one is per block or per thread
            used = set(guards)
            for i in s.indices:
                used |= deps(i, env)
            for v, kind in loops:
                if v not in used:
                    where = ", ".join(str(i) for i in s.indices)
                    return (f"every iteration of the {kind} loop {v.name} stores to the same element of "
                            f"{s.buffer.name} ({s.buffer.name}[{where}]) with a plain store: the iterations run "
                            "at once on several threads (or blocks) and their updates race (lost updates; a "
                            "run may not show it). Keep the loop that adds into one element serial, or give "
                            "each iteration its own partial (sch.rfactor) and add those after the loop")
            return None
        for attr in ("body", "block", "init"):
            r = walk(getattr(s, attr, None), env, loops, guards)
            if r:
                return r
        return None

    return walk(func.body, {}, [], frozenset())


def check_funcs(funcs: dict[str, Any]) -> None:
    """Raise :class:`ParallelRace` naming the PrimFunc when :func:`parallel_race`
    finds a race in one of ``funcs`` (name -> PrimFunc; other values skipped)."""
    from tvm import tirx

    for name, func in funcs.items():
        if isinstance(func, tirx.PrimFunc):
            why = parallel_race(func)
            if why:
                raise ParallelRace(f"PrimFunc {name}: {why}")
