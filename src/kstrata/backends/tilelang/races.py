"""Blocks of one TileLang kernel that store to one element of a global buffer.

On ``tilelang-c`` the blocks of a ``T.Kernel`` run one after another in one
thread (a plain loop over the block index), so a kernel whose blocks add
into one output element with a plain read and write (a split reduction
without ``T.atomic_add``: lost updates on a GPU) read correct, 54 public and
139 hidden tests (red-team 2026-12-04, case rt47; the Triton interpreter's
form of it is :mod:`kstrata.backends.triton.fidelity`). The C code cannot be
watched element by element, so the program is read before it is lowered:
:func:`block_race` finds a store to a kernel parameter (a ``BufferStore``, or
the destination region of ``T.copy``/``T.fill``/...) that blocks ``v`` and
``v + 1`` of a block index of extent > 1 make to the same element under the
same conditions: ``v + 1`` substituted for ``v``, TVM's arithmetic analyzer
proves every index and every enclosing condition unchanged (so ``Y[r + c //
nc]`` or ``if c >= 0:`` name the index and separate nothing; a loop whose
bounds move with ``v`` moves its variable too). An index read from memory
(``Y[idx[0]]``) is not judged, a local scalar (``T.alloc_var``) stored once
reads as its value; atomics (``T.atomic_*``) are not stores. The rule assumes blocks that write one element write different
values (the same constant from every block would be flagged).

A block may not read, with a plain load, an element of a parameter that
another block stores either: the last chunk's block adding the partials the
others stored, or block ``b`` reading the running total block ``b - 1``
stored, read correct on tilelang-c, whose earlier blocks always ran first
(red-team 2026-12-04, case rt48). For each block index ``v`` of extent > 1,
each read's element span in block ``v`` (its indices relaxed over their loops
by TVM's interval analysis) must be provably disjoint, in some dimension, from
each store's span in block ``v + d`` (``d >= 1``), and the other way round. A
read under a guard that decides on an atomic's result (a counter's ticket:
the block that counts last) is not judged, unless a guard inside the taking
of the ticket also names the block (``if c == nc - 1 and ticket == nc - 1``):
it reads only where the last chunk's block takes the last ticket, which it
always does in tilelang-c's block order and need not on a GPU, and then no
block reads (red-team 2026-12-05, case rt50: correct before). With every
ticket held at one value, such a guard must be the same for blocks ``v`` and
``v + 1``; a guard on a loop variable picks elements (``k != c``: the others'
partials) and is not judged. A read at an index read from memory is judged a
race unless the block stored that buffer at the same index expression.

:func:`block_race` also finds a plain load or store of a parameter (one the
C code runs whenever its statement runs: not a branch of a select or
``T.if_then_else``) that indexes outside an axis at the first or last point
of its blocks and loops, every enclosing condition holding there: a load
before its bounds test whose value is dropped after it read correct on
tilelang-c, which reads whatever memory is there (case rt48). The kernel's
first call then raises :class:`OutOfBounds`. Only such a concrete witness
counts, so an access the analysis cannot place is never flagged.
"""

from __future__ import annotations

from typing import Any


class BlockRace(RuntimeError):
    """Blocks of one TileLang kernel store to one element without an order
    between them on a GPU (see :func:`block_race`)."""


class OutOfBounds(RuntimeError):
    """A TileLang kernel loads or stores a parameter's element outside the
    buffer at its first or last block and loop iteration (see :func:`block_race`)."""


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
    buffer, or one block may read an element another stores, or an access
    indexes outside its buffer (the message then starts with
    ``out-of-bounds``), or ``None`` (module docstring for the rules). Must run
    where TileLang's ``tvm`` imports."""
    from tilelang import tvm  # noqa: F401 - TileLang's bundled TVM, imported before its modules
    from tvm import arith, ir, tirx

    params = [b.data for b in func.buffer_map.values()]
    bind, let = getattr(tirx, "Bind", None), getattr(tirx, "LetStmt", None)  # TVM 0.27: Bind; older: LetStmt

    def is_param(buf: Any) -> bool:
        return any(buf.data.same_as(p) for p in params)

    # a local scalar (T.alloc_var) stored once in the whole kernel reads as the value stored
    stores_local: dict[Any, list[Any]] = {}

    def count(node: Any) -> None:
        if isinstance(node, tirx.BufferStore) and not is_param(node.buffer) and node.buffer.scope() == "local.var":
            stores_local.setdefault(node.buffer.data, []).append(node.value)

    tirx.stmt_functor.post_order_visit(func.body, count)
    single = [(data, values[0]) for data, values in stores_local.items() if len(values) == 1]

    def scalar(node: Any) -> Any:
        for data, value in single:
            if node.buffer.data.same_as(data):
                return value
        return None

    def inline(expr: Any, lets: list[tuple[Any, Any]]) -> Any:
        """``expr`` with single-assignment local scalars and the let-bound variables in ``lets``
        replaced by their values (innermost last)."""
        for _ in range(4):  # a scalar stored from another
            expr = tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, scalar, ["tirx.BufferLoad"]).value
        for var, value in reversed(lets):
            expr = tirx.stmt_functor.substitute(expr, {var: value})
        return expr

    def check(buf: Any, indices: list[Any], blocks: list[tuple[Any, Any]], guards: list[Any],
              loops: list[tuple[Any, Any, Any]], lets: list[tuple[Any, Any]]) -> str | None:
        indices = [inline(i, lets) for i in indices]
        guards = [inline(g, lets) for g in guards]
        if any(_vars(i, tirx)[1] for i in indices):
            return None  # an index read from memory: not judged
        for v, extent in blocks:
            if isinstance(extent, tirx.IntImm) and extent.value <= 1:
                continue
            # the same element for blocks v and v + 1, whatever the other indices: substitute v + 1 for v and
            # let TVM's analyzer prove every index (and every enclosing condition) unchanged; a loop whose
            # bounds move with v moves its variable too
            ana = arith.Analyzer()
            for b, ext in blocks:
                ana.bind(b, ir.Range.from_min_extent(0, ext - 1 if b.same_as(v) else ext))

            def fixed(e: Any, v: Any = v, ana: Any = ana) -> bool:
                return bool(ana.can_prove_equal(tirx.stmt_functor.substitute(e, {v: v + 1}), e))

            moving = [lv for lv, lo, ext in loops if not (fixed(inline(lo, lets)) and fixed(inline(ext, lets)))]
            used = [x for i in indices for x in _vars(i, tirx)[0]] + [x for g in guards for x in _vars(g, tirx)[0]]
            if any(x.same_as(m) for x in used for m in moving):
                continue
            if all(fixed(i) for i in indices) and all(fixed(g) for g in guards):
                where = ", ".join(str(i) for i in indices)
                return (f"blocks that differ only in {v.name} (extent {extent}) store to the same element of "
                        f"{buf.name} ({buf.name}[{where}]) with a plain store: on a GPU "
                        "they run at once and race (tilelang-c runs blocks one after another); use T.atomic_add "
                        "or one block per output element")
        return None

    def regions(call: Any, out: list[Any], mask: int = 2) -> None:
        """The ``BufferLoad`` naming each region of ``call`` accessed as ``mask`` says
        (2: written, 1: read)."""
        def visit(node: Any) -> None:
            if isinstance(node, tirx.Call) and str(getattr(node.op, "name", "")).endswith("region") \
                    and len(node.args) >= 2 and isinstance(node.args[0], tirx.BufferLoad) \
                    and isinstance(node.args[1], tirx.IntImm) and node.args[1].value & mask:
                out.append(node.args[0])
        tirx.stmt_functor.post_order_visit(call, visit)

    # every plain access to a parameter with its context (buffer, indices, blocks, guards, loops, lets), for
    # the reads of another block's stores (read_race)
    stores: list[tuple[Any, ...]] = []
    # the guards each ticket (a local stored from an atomic's result) was taken under
    ticket_guards: list[list[Any]] = []
    reads: list[tuple[Any, ...]] = []

    # the plain loads of a parameter that the C code runs whenever their statement runs (not a branch of a
    # select or if_then_else, not a region's start), for out_of_bounds
    loads: list[tuple[Any, ...]] = []

    def note_reads(expr: Any, ctx: tuple[Any, ...], skip: list[Any] | None = None) -> None:
        branches: list[Any] = []

        def branch(node: Any) -> None:
            if isinstance(node, tirx.Select) or (isinstance(node, tirx.Call) and "if_then_else" in str(
                    getattr(node.op, "name", ""))):
                for arm in (node.true_value, node.false_value) if isinstance(node, tirx.Select) else node.args[1:]:
                    tirx.stmt_functor.post_order_visit(arm, lambda x: branches.append(x)
                                                       if isinstance(x, tirx.BufferLoad) else None)
        tirx.stmt_functor.post_order_visit(expr, branch)

        def visit(node: Any) -> None:
            if isinstance(node, tirx.BufferLoad) and is_param(node.buffer) \
                    and not any(node.same_as(k) for k in skip or []):
                reads.append((node.buffer, list(node.indices), *ctx))
                if not any(node.same_as(k) for k in branches):
                    loads.append((node.buffer, list(node.indices), *ctx))
        tirx.stmt_functor.post_order_visit(expr, visit)

    def walk(s: Any, blocks: list[tuple[Any, Any]], guards: list[Any], loops: list[tuple[Any, Any, Any]],
             lets: list[tuple[Any, Any]]) -> str | None:
        if isinstance(s, tirx.SeqStmt):
            for x in s.seq:
                if bind is not None and isinstance(x, bind):  # a binding for the statements after it
                    lets = lets + [(x.var, x.value)]
                    continue
                r = walk(x, blocks, guards, loops, lets)
                if r:
                    return r
            return None
        if isinstance(s, tirx.For):
            tag = getattr(getattr(s, "thread_binding", None), "thread_tag", "") or ""
            if s.kind == tirx.ForKind.THREAD_BINDING and tag.startswith("blockIdx"):
                return walk(s.body, blocks + [(s.loop_var, s.extent)], guards, loops, lets)
            return walk(s.body, blocks, guards, loops + [(s.loop_var, s.min, s.extent)], lets)
        if isinstance(s, tirx.IfThenElse):
            note_reads(s.condition, (blocks, guards, loops, lets))
            r = walk(s.then_case, blocks, guards + [s.condition], loops, lets)
            if r or s.else_case is None:
                return r
            return walk(s.else_case, blocks, guards + [s.condition], loops, lets)
        if let is not None and isinstance(s, let):
            return walk(s.body, blocks, guards, loops, lets + [(s.var, s.value)])
        if isinstance(s, tirx.BufferStore):
            if not is_param(s.buffer) and atomic(s.value):  # a ticket taken: under these guards
                ticket_guards.append(guards)
            note_reads(s.value, (blocks, guards, loops, lets))
            for i in s.indices:
                note_reads(i, (blocks, guards, loops, lets))
            if not is_param(s.buffer):
                return None
            stores.append((s.buffer, list(s.indices), blocks, guards, loops, lets))
            return check(s.buffer, list(s.indices), blocks, guards, loops, lets)
        if isinstance(s, tirx.Evaluate):
            if isinstance(s.value, tirx.Call) and "atomic" in str(getattr(s.value.op, "name", "")):
                return None
            dst: list[Any] = []
            regions(s.value, dst)
            src: list[Any] = []
            regions(s.value, src, 1)
            note_reads(s.value, (blocks, guards, loops, lets), skip=dst + src)
            for load in src:  # a region read (T.copy's source): its start, as an element of it
                if is_param(load.buffer):
                    reads.append((load.buffer, list(load.indices), blocks, guards, loops, lets))
            for load in dst:
                if is_param(load.buffer):
                    stores.append((load.buffer, list(load.indices), blocks, guards, loops, lets))
                    r = check(load.buffer, list(load.indices), blocks, guards, loops, lets)
                    if r:
                        return r
            return None
        if isinstance(s, tirx.SBlockRealize):
            return walk(s.block, blocks, guards + [s.predicate], loops, lets)
        for attr in ("body", "init"):
            sub = getattr(s, attr, None)
            if sub is not None:
                r = walk(sub, blocks, guards, loops, lets)
                if r:
                    return r
        return None

    def span(e: Any, loops: list[tuple[Any, Any, Any]], lets: list[tuple[Any, Any]]) -> tuple[Any, Any]:
        """Least and largest value of index ``e`` over its loops (innermost first), in the block indices."""
        lo = hi = inline(e, lets)
        for var, mn, ext in reversed(loops):
            mn, ext = inline(mn, lets), inline(ext, lets)
            dom = {var: arith.IntervalSet(mn, mn + ext - 1)}
            lo, hi = ana0.int_set(lo, dom).min_value, ana0.int_set(hi, dom).max_value
        return lo, hi

    def apart(read: tuple[Any, ...], store: tuple[Any, ...], v: Any, extent: Any,
              blocks: list[tuple[Any, Any]]) -> bool:
        """Whether block ``v`` reads no element block ``v + d`` stores, nor block ``v + d`` one block ``v``
        stores (``d`` >= 1; the other block indices equal): some dimension's spans are provably disjoint."""
        d = tirx.Var("d", v.dtype)
        ana = arith.Analyzer()
        for b, ext in blocks:
            ana.bind(b, ir.Range.from_min_extent(0, ext))
        ana.bind(d, ir.Range.from_min_extent(1, extent - 1))
        rs = [span(i, read[4], read[5]) for i in read[1]]
        ss = [span(i, store[4], store[5]) for i in store[1]]
        if len(rs) != len(ss):
            return False

        def moved(e: Any) -> Any:
            return tirx.stmt_functor.substitute(e, {v: v + d})

        def disjoint(a: list[tuple[Any, Any]], b: list[tuple[Any, Any]]) -> bool:
            return any(ana.can_prove(ahi < blo) or ana.can_prove(bhi < alo) for (alo, ahi), (blo, bhi) in zip(a, b))

        with ana.constraint_scope(v + d < extent):
            return disjoint(rs, [(moved(lo), moved(hi)) for lo, hi in ss]) and \
                disjoint([(moved(lo), moved(hi)) for lo, hi in rs], ss)

    def atomic(expr: Any) -> bool:
        found = [False]

        def visit(node: Any) -> None:
            if isinstance(node, tirx.Call) and "atomic" in str(getattr(node.op, "name", "")):
                found[0] = True
        tirx.stmt_functor.post_order_visit(expr, visit)
        return found[0]

    # local buffers that some store fills from an atomic's result (a counter's ticket)
    tickets = [data for data, values in stores_local.items() if any(atomic(x) for x in values)]

    def run_time(expr: Any) -> bool:
        """Whether ``expr`` decides on an atomic's result (a counter's ticket orders a read under it):
        with the ticket replaced by an unknown count (>= 0), two counts can give ``expr`` different values
        (``c == nc - 1 and ticket >= 0`` decides nothing on it). A guard on memory, a counter's included
        (a plain load of it is not ordered after the other blocks' atomics), orders nothing."""
        t, t0 = tirx.Var("ticket", "int64"), tirx.Var("other_ticket", "int64")

        def replaced(by: Any) -> Any:
            def counted(node: Any) -> Any:
                if (isinstance(node, tirx.Call) and "atomic" in str(getattr(node.op, "name", ""))) or (
                        isinstance(node, tirx.BufferLoad)
                        and any(node.buffer.data.same_as(x) for x in tickets)):
                    return tirx.Cast(node.dtype, by) if node.dtype != by.dtype else by
                return None

            return tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, counted,
                                                  ["tirx.Call", "tirx.BufferLoad"]).value

        a, b = replaced(t), replaced(t0)
        if not any(x.same_as(t) for x in _vars(a, tirx)[0]):
            return False
        ana = arith.Analyzer()
        for v in (t, t0):
            ana.bind(v, ir.Range.from_min_extent(0, 1 << 40))  # a count: never negative
        # the guard decides on the ticket where two tickets can give it different values
        same = tirx.Or(tirx.And(a, b), tirx.And(tirx.Not(a), tirx.Not(b)))
        return not ana.can_prove(same)

    def ordered(guards: list[Any], lets: list[tuple[Any, Any]]) -> bool:
        return any(run_time(inline(g, lets)) for g in guards)

    def after_ticket(guards: list[Any]) -> list[Any]:
        """The guards of a read that were not already around the ticket it is ordered by: those inside
        the taking of the ticket (a guard that takes it itself, ``if T.atomic_add(..) == n``, and the ones
        within it), which decide which block reads."""
        for k, g in enumerate(guards):
            if atomic(g):
                return guards[k:]
        base = max((len(tg) for tg in ticket_guards
                    if len(tg) <= len(guards) and all(a.same_as(b) for a, b in zip(tg, guards))), default=0)
        return guards[base:]

    def picks_a_block(guards: list[Any], lets: list[tuple[Any, Any]], v: Any, extent: Any,
                      blocks: list[tuple[Any, Any]], loops: list[tuple[Any, Any, Any]]) -> Any:
        """A guard of ``guards`` that, with every ticket held at one value, can differ between blocks
        ``v`` and ``v + 1``: it names which block reads (``c == nc - 1 and ticket == nc - 1``), so the
        read is right only where that block takes the last ticket, as it does in tilelang-c's block
        order and need not on a GPU; None if there is none. A guard on a loop variable picks elements,
        not blocks (``k != c``: the others' partials, its own kept in a register), and is not judged."""
        t = tirx.Var("ticket", "int64")
        ana = arith.Analyzer()
        for b, ext in blocks:
            ana.bind(b, ir.Range.from_min_extent(0, ext - 1 if b.same_as(v) else ext))
        ana.bind(t, ir.Range.from_min_extent(0, 1 << 40))

        def held(node: Any) -> Any:
            if (isinstance(node, tirx.Call) and "atomic" in str(getattr(node.op, "name", ""))) or (
                    isinstance(node, tirx.BufferLoad) and any(node.buffer.data.same_as(x) for x in tickets)):
                return tirx.Cast(node.dtype, t) if node.dtype != t.dtype else t
            return None

        for g in guards:
            a = tirx.stmt_functor.ir_transform(tirx.Evaluate(inline(g, lets)), None, held,
                                               ["tirx.Call", "tirx.BufferLoad"]).value
            if any(x.same_as(lv) for x in _vars(arith.Analyzer().simplify(a), tirx)[0] for lv, _, _ in loops):
                continue
            b = tirx.stmt_functor.substitute(a, {v: v + 1})
            if not ana.can_prove(tirx.Or(tirx.And(a, b), tirx.And(tirx.Not(a), tirx.Not(b)))):
                return g
        return None

    def read_race() -> str | None:
        for read in reads:
            buf, indices, blocks, guards, _, lets = read
            mine = [st for st in stores if st[0].data.same_as(buf.data)]
            if not mine:
                continue  # never stored
            # ordered by a counter's value read at run time, if any block may take the deciding ticket
            ticketed = ordered(guards, lets)
            if not ticketed and any(_vars(inline(i, lets), tirx)[1] for i in indices):
                # an index read from memory: only the element this block stored at the same index is known
                same = [st for st in mine if len(st[1]) == len(indices) and all(
                    ir.structural_equal(inline(a, st[5]), inline(b, lets)) for a, b in zip(st[1], indices))]
                if same:
                    continue
                where = ", ".join(str(i) for i in indices)
                return (f"a block reads {buf.name}[{where}] at an index read from memory, and blocks store to "
                        f"{buf.name} with plain stores: on a GPU blocks run in no order, so the read may come "
                        "before another block's store (tilelang-c runs blocks one after another)")
            for v, extent in blocks:
                if (isinstance(extent, tirx.IntImm) and extent.value <= 1) or all(
                        any(b.same_as(v) for b, _ in st[2]) and apart(read, st, v, extent, blocks) for st in mine):
                    continue
                where = ", ".join(str(i) for i in indices)
                if not ticketed:
                    return (f"a block reads {buf.name}[{where}], which another block (one that differs in "
                            f"{v.name}, extent {extent}) may store with a plain store: on a GPU blocks run "
                            "in no order, so the read may come before the store (tilelang-c runs blocks one "
                            "after another); give each block the elements it reads, or split the kernel in "
                            "two launches")
                g = picks_a_block(after_ticket(guards), lets, v, extent, blocks, read[4])
                if g is not None:
                    return (f"a block reads {buf.name}[{where}], which other blocks store, under a counter's "
                            f"ticket and the guard {inline(g, lets)}, which names the block ({v.name}): it "
                            "reads only where that block takes the deciding ticket, as it does in tilelang-c's "
                            "block order; on a GPU blocks run in no order, another block may take it, and then "
                            "no block reads. Decide on the ticket alone")
        return None

    ana0 = arith.Analyzer()
    def corner(blocks: list[tuple[Any, Any]], loops: list[tuple[Any, Any, Any]], lets: list[tuple[Any, Any]],
               top: bool) -> dict[Any, Any] | None:
        """Every block index and loop variable at its largest (``top``) or least value, outer first;
        None where an extent is not a positive constant there (the statement may never run)."""
        at: dict[Any, Any] = {}
        for var, mn, ext in [(b, tirx.IntImm(b.dtype, 0), ext) for b, ext in blocks] + list(loops):
            mn, ext = (ana0.simplify(tirx.stmt_functor.substitute(inline(e, lets), at)) for e in (mn, ext))
            if not (isinstance(ext, tirx.IntImm) and ext.value > 0):
                return None
            at[var] = ana0.simplify(mn + ext - 1 if top else mn)
        return at

    def out_of_bounds() -> str | None:
        """A plain load or store of a parameter whose statement runs at the first or last point of its
        blocks and loops (every enclosing condition holds there) with an index outside the buffer."""
        for kind, accesses in (("reads", loads), ("stores", stores)):
            for buf, indices, blocks, guards, loops, lets in accesses:
                if len(indices) != len(buf.shape):
                    continue
                for top in (True, False):
                    at = corner(blocks, loops, lets, top)
                    if at is None:
                        continue

                    def value(e: Any, at: Any = at, lets: Any = lets) -> Any:
                        return ana0.simplify(tirx.stmt_functor.substitute(inline(e, lets), at))

                    if not all(isinstance(g, tirx.IntImm) and g.value for g in map(value, guards)):
                        continue
                    for k, (i, n) in enumerate(zip(indices, buf.shape)):
                        i, n = value(i), value(n)
                        if isinstance(i, tirx.IntImm) and isinstance(n, tirx.IntImm) \
                                and not 0 <= i.value < n.value:
                            where = ", ".join(str(x) for x in indices)
                            return (f"out-of-bounds: a block {kind} {buf.name}[{where}] at index {i.value} of "
                                    f"axis {k}, whose size is {n.value} (the kernel's "
                                    f"{'last' if top else 'first'} block and loop iteration, every enclosing "
                                    "condition true): the C target reads or writes whatever memory is there, a "
                                    "GPU an illegal address. Guard or clamp the index, even where its value is "
                                    "dropped later")
        return None

    return walk(func.body, [], [], [], []) or read_race() or out_of_bounds()


def watch_block_races() -> bool:
    """Make the first call of every TileLang kernel raise :class:`BlockRace`
    when :func:`block_race` finds blocks that race, :class:`OutOfBounds` when
    it finds an access outside a buffer (idempotent). Call before candidate
    code runs, in the TileLang environment's process. Returns False when
    TileLang is not importable."""
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
            raise (OutOfBounds if self._kstrata_race.startswith("out-of-bounds") else BlockRace)(self._kstrata_race)
        return orig(self, *args, **kwargs)

    call._kstrata_races = True  # type: ignore[attr-defined]
    JITKernel.__call__ = call
    return True
