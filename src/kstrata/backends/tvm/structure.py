"""What a lowered graph leaves to edit: blocks and loops a schedule can reach.

Computed where the candidate's graph is lowered (a sandboxed process,
:mod:`kstrata.backends.tvm.isolated`), returned as counts only, and read by
the agents' router (:mod:`kstrata.agents.closed`): a graph that lowers to one
PrimFunc with one block is one operator with no intermediate (nothing to fuse
or rewrite at the graph level), and a PrimFunc whose every loop around a
block is already parallel, vectorized, unrolled or bound leaves nothing for
``sch.get_loops`` to transform.
"""

from __future__ import annotations

from typing import Any


def func_structure(func: Any) -> dict[str, int]:
    """Blocks and open loops of one PrimFunc.

    Parameters
    ----------
    func:
        A ``tvm.tirx.PrimFunc`` (static or symbolic shapes).

    Returns
    -------
    dict
        ``{"blocks": n, "open_loops": n}``: the blocks other than the root
        block, and the loops enclosing a block that a schedule could still
        transform (serial, of an extent other than 1; each loop counted once).
    """
    import tvm
    from tvm.s_tir import Schedule
    from tvm.tirx import ForKind, IntImm

    sch = Schedule(tvm.IRModule({"main": func}))
    blocks, todo = [], list(sch.get_child_blocks(sch.get_sblock("root")))
    while todo:
        b = todo.pop()
        blocks.append(b)
        todo.extend(sch.get_child_blocks(b))
    open_loops: list[Any] = []
    for b in blocks:
        for loop in sch.get_loops(b):
            node = sch.get(loop)
            unit = isinstance(node.extent, IntImm) and int(node.extent) == 1
            if node.kind == ForKind.SERIAL and not unit and not any(node.same_as(o) for o in open_loops):
                open_loops.append(node)
    return {"blocks": len(blocks), "open_loops": len(open_loops)}


def graph_structure(funcs: dict[str, Any]) -> dict[str, dict[str, int]]:
    """:func:`func_structure` of every PrimFunc of a lowered graph, by name; a
    PrimFunc the schedule API cannot read is left out."""
    out = {}
    for name, func in funcs.items():
        try:
            out[name] = func_structure(func)
        except Exception:  # noqa: BLE001 - unknown structure: nothing is concluded from it
            continue
    return out


def checked_structure(value: Any) -> dict[str, dict[str, int]] | None:
    """``value`` if it has :func:`graph_structure`'s shape (names to two small
    non-negative counts), else ``None``: the sandbox's answer is candidate
    output and is accepted only in that shape."""
    if not isinstance(value, dict) or len(value) > 1000:
        return None
    out = {}
    for name, s in value.items():
        if not (isinstance(name, str) and isinstance(s, dict) and set(s) == {"blocks", "open_loops"}
                and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 10**6 for v in s.values())):
            return None
        out[name[:200]] = {"blocks": s["blocks"], "open_loops": s["open_loops"]}
    return out
