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
element. The dependence is read through block bindings and let bindings, so only
such plain races are found; ``threadIdx``-bound reductions are left to TVM's
cross-thread lowering (a store in a reduction block). The threads of a
``threadIdx``-bound loop are judged the same way for stores (not for
reads, which barriers may order): a hand-written PrimFunc whose two threads
per block each added their part into ``y[i]`` read correct on
``tvm-opencl``, whose CPU driver (PoCL) runs a work-group's work-items one
after another (red-team 2026-12-05, case rt52). The TileLang form of this check is
:mod:`kstrata.backends.tilelang.races`.

The dependence is read after TVM's arithmetic analyzer simplified each index
and condition with the loops bound to their ranges and the bindings
substituted, so an index or a condition that names the loop but does not
depend on it (``y[i, c // 2]`` or ``if c < 2:`` in a loop of two) separates
nothing: both read correct before (red-team 2026-12-05, case rt52). The
first iterations of each such loop (:data:`ITERATIONS`) are also taken one
by one: two whose conditions all hold and whose indices are equal store to
one element (``if c <= 1:`` in a loop of three).

An iteration may not read, with a plain load, an element another iteration
of the loop stores either (the second part's iteration adding the partial
the first one stored as soon as its own part is done: in order on one
thread, a race on two; case rt52): with the iterations taken one by one as
above and the last two of a loop of constant extent, a load of a buffer in
iteration ``k1`` whose conditions hold and whose indices equal (or, over
the loops inside the iteration, provably span) those of a store to that
buffer in iteration ``k2 != k1`` whose conditions hold is a race (the last
part's iteration adding the partials ``part[k]``, ``k < nc - 1``, the
others stored). A buffer the PrimFunc
allocates is judged as a parameter is (one allocated outside the loop is
the same memory for every iteration; an allocation in the loop's body holds
no index of the loop); a ``shared`` or ``local`` one is not (one per block
or thread).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class ParallelRace(RuntimeError):
    """Iterations of a parallel loop store to one element (see :func:`parallel_race`)."""


#: how many first iterations of a racing loop are taken one by one (module docstring)
ITERATIONS = 4


@dataclass
class _Access:
    """One plain load or store of a buffer, with what decides where it lands."""

    store: bool
    buffer: Any
    indices: list
    guards: list  # conditions that hold where it runs
    events: list  # (var, value or Range), outermost first: loops and bindings around it
    loops: list  # (var, kind, extent) of the racing loops around it, outermost first

    @property
    def exempt(self) -> bool:
        """A shared or local buffer (one per block or thread)."""
        return self.buffer.scope() != "global"


def _collect(func: Any) -> list[_Access]:
    """Every plain load and store of ``func``'s body (a ``tvm.tirx.PrimFunc``)."""
    from tvm import tirx
    from tvm.ir import Range

    try:
        from tvm import s_tir
    except ImportError:  # a TVM without s_tir blocks
        s_tir = None
    out: list[_Access] = []

    def loads(e: Any, ctx: tuple) -> None:
        """Record the loads in expression ``e`` (fields walked generically)."""
        if e is None or isinstance(e, (str, int, float)):
            return
        if isinstance(e, (list, tuple)) or type(e).__name__ == "Array":
            for x in e:
                loads(x, ctx)
            return
        if type(e).__name__ in ("BufferLoad", "TensorLoad"):  # tirx.BufferLoad is a constructor here
            buf = getattr(e, "buffer", None) or e.source
            events, loops, guards = ctx
            out.append(_Access(False, buf, list(e.indices), list(guards), events, loops))
        for attr in ("a", "b", "value", "args", "indices", "condition", "true_value", "false_value",
                     "base", "stride", "body"):
            x = getattr(e, attr, None)
            if x is not None and not isinstance(x, tirx.Buffer):
                loads(x, ctx)

    def walk(s: Any, events: list, loops: list, guards: list) -> None:
        if s is None:
            return
        ctx = (events, loops, guards)
        if isinstance(s, tirx.SeqStmt):
            for x in s.seq:
                if isinstance(x, tirx.Bind):  # a binding for the statements after it
                    loads(x.value, (events, loops, guards))  # events as bound so far, not ctx's
                    events = events + [(x.var, x.value)]
                    continue
                walk(x, events, loops, guards)
            return
        if isinstance(s, tirx.For):
            loads([s.min, s.extent], ctx)
            kind = ""
            if s.kind == tirx.ForKind.PARALLEL:
                kind = "parallel"
            elif s.kind == tirx.ForKind.THREAD_BINDING:
                tag = getattr(getattr(s, "thread_binding", None), "thread_tag", "") or ""
                kind = tag if tag.startswith(("blockIdx", "threadIdx")) else ""
            one = isinstance(s.extent, tirx.IntImm) and s.extent.value <= 1
            ev = events + [(s.loop_var, Range.from_min_extent(s.min, s.extent))]
            walk(s.body, ev, loops + ([(s.loop_var, kind, s.extent)] if kind and not one else []), guards)
            return
        if isinstance(s, tirx.IfThenElse):
            loads(s.condition, ctx)
            walk(s.then_case, events, loops, guards + [s.condition])
            walk(s.else_case, events, loops, guards + [tirx.Not(s.condition)])
            return
        if isinstance(s, tirx.LetStmt):
            loads(s.value, ctx)
            walk(s.body, events + [(s.var, s.value)], loops, guards)
            return
        if s_tir is not None and isinstance(s, s_tir.SBlockRealize):
            block = s.block
            loads([s.iter_values, s.predicate], ctx)
            ev = events + [(iv.var, val) for iv, val in zip(block.iter_vars, s.iter_values)]
            g = guards + [s.predicate]
            if block.init is not None or any(int(iv.iter_type) == 2 for iv in block.iter_vars):
                # a reduction block: TVM lowers its threadIdx-bound reduction loops to a cross-thread reduction
                loops = [lp for lp in loops if not lp[1].startswith("threadIdx")]
            walk(block.init, ev, loops, g)
            walk(block.body, ev, loops, g)
            return
        if isinstance(s, tirx.BufferStore):
            loads([s.value, s.indices], ctx)
            out.append(_Access(True, s.buffer, list(s.indices), list(guards), events, loops))
            return
        loads([getattr(s, "value", None), getattr(s, "condition", None)], ctx)
        for attr in ("body", "block", "init"):
            walk(getattr(s, attr, None), events, loops, guards)

    walk(func.body, [], [], [])
    return out


def _forms(a: _Access, var: Any = None, k: int | None = None) -> tuple[list, Any, Any]:
    """``a``'s indices and the conjunction of its conditions, simplified with its
    loops bound to their ranges and its bindings substituted; with ``var`` and
    ``k``, that loop's variable held at iteration ``k``."""
    from tvm import tirx
    from tvm.sym import Analyzer

    ana = Analyzer()
    for v, val in a.events:
        if var is not None and v.same_as(var):
            val = tirx.IntImm(str(v.ty), k)
        try:
            ana.bind(v, val)
        except Exception:  # noqa: BLE001 - a binding the analyzer cannot take only simplifies less
            pass
    cond = tirx.IntImm("bool", 1)
    for g in a.guards:
        cond = tirx.And(cond, g)
    return [ana.simplify(i) for i in a.indices], ana.simplify(cond), ana


def _holds(e: Any) -> bool:
    from tvm import tirx

    return isinstance(e, tirx.IntImm) and bool(e.value)


def _same(xs: list, ys: list) -> bool:
    from tvm.sym import Analyzer

    ana = Analyzer()
    return len(xs) == len(ys) and all(ana.can_prove_equal(x, y) for x, y in zip(xs, ys))


def _iterations(extent: Any) -> list[int]:
    """The first :data:`ITERATIONS` of a loop of ``extent`` and, where it is a
    constant, its last two (the last part's iteration that combines the others)."""
    from tvm import tirx

    if not isinstance(extent, tirx.IntImm):
        return list(range(ITERATIONS))
    n = extent.value
    return sorted(set(range(min(n, ITERATIONS))) | {k for k in (n - 2, n - 1) if k >= 0})


def _covers(read: list, ana: Any, point: list) -> bool:
    """Whether a load at ``read`` (its indices, loops inside the iteration bound
    in ``ana``) provably spans the element ``point`` (constant indices)."""
    from tvm import tirx

    if len(read) != len(point) or not all(isinstance(p, tirx.IntImm) for p in point):
        return False
    for r, p in zip(read, point):
        span = ana.int_set(r)
        if not (ana.can_prove(span.min_value <= p) and ana.can_prove(p <= span.max_value)):
            return False
    return True


def _where(a: _Access, indices: list | None = None) -> str:
    return f"{a.buffer.name}[{', '.join(str(i) for i in (indices if indices is not None else a.indices))}]"


def parallel_race(func: Any) -> str | None:
    """Why iterations of a parallel, ``blockIdx``- or ``threadIdx``-bound loop
    of ``func`` (a ``tvm.tirx.PrimFunc``, scheduled or as written) store to the
    same element of one of its buffers, or one (not of a ``threadIdx`` loop)
    reads an element another stores, or ``None`` (module docstring for the rules)."""
    from tvm.tirx.analysis import undefined_vars

    accesses = _collect(func)
    forms: dict[tuple[int, int, int], tuple[list, Any, Any]] = {}

    def at(n: int, a: _Access, li: int, k: int) -> tuple[list, Any, Any]:
        key = (n, li, k)
        if key not in forms:
            forms[key] = _forms(a, a.loops[li][0], k)
        return forms[key]

    for n, a in enumerate(accesses):
        if not a.store or a.exempt:
            continue
        idx, cond, _ = _forms(a)
        used = [u for e in idx + [cond] for u in undefined_vars(e)]
        for li, (v, kind, extent) in enumerate(a.loops):
            same = not any(u.same_as(v) for u in used)
            if not same:
                taken = [at(n, a, li, k) for k in _iterations(extent)]
                same = any(_holds(taken[p][1]) and _holds(taken[q][1]) and _same(taken[p][0], taken[q][0])
                           for p in range(len(taken)) for q in range(p + 1, len(taken)))
            if same:
                return (f"every iteration of the {kind} loop {v.name} stores to the same element of "
                        f"{a.buffer.name} ({_where(a)}) with a plain store: the iterations run "
                        "at once on several threads (or blocks) and their updates race (lost updates; a "
                        "run may not show it). Keep the loop that adds into one element serial, or give "
                        "each iteration its own partial (sch.rfactor) and add those after the loop")
    for m, s in enumerate(accesses):
        if not s.store or s.exempt:
            continue
        for li, (v, kind, extent) in enumerate(s.loops):
            if kind.startswith("threadIdx"):
                continue  # the threads of a block may order their reads with barriers (storage_sync)
            for n, r in enumerate(accesses):
                if r.store or not r.buffer.same_as(s.buffer):
                    continue
                lj = next((j for j, lp in enumerate(r.loops) if lp[0].same_as(v)), None)
                if lj is None:
                    continue
                for k1 in _iterations(extent):
                    ri, rc, rana = at(n, r, lj, k1)
                    if not _holds(rc):
                        continue
                    for k2 in _iterations(extent):
                        si, sc, _ = at(m, s, li, k2)
                        if k2 != k1 and _holds(sc) and (_same(ri, si) or _covers(ri, rana, si)):
                            return (f"iteration {v.name} = {k1} of the {kind} loop {v.name} reads "
                                    f"{_where(r, ri)}, and iteration {v.name} = {k2} stores {_where(s, si)}: the iterations "
                                    "run at once on several threads (or blocks), in no order, so the read may "
                                    "come before the store (a run may not show it). Read only what the same "
                                    "iteration stored, or combine the iterations' results after the loop")
    return None


def check_funcs(funcs: dict[str, Any]) -> None:
    """Raise :class:`ParallelRace` naming the PrimFunc when :func:`parallel_race`
    finds a race in one of ``funcs`` (name -> PrimFunc; other values skipped)."""
    from tvm import tirx

    for name, func in funcs.items():
        if isinstance(func, tirx.PrimFunc):
            why = parallel_race(func)
            if why:
                raise ParallelRace(f"PrimFunc {name}: {why}")
