"""Levels with nothing left to edit on a candidate: no role is asked there.

A level of a candidate is closed when, in this run:

1. **Declined.** Its role declined (or kstrata skipped it, :func:`skipped`)
   on a candidate with the same text at that level and the levels above it
   (:func:`level_key`: the graph text for ``graph``; graph and schedule for
   ``schedule``; all for ``source``). Asked again, the role sees the same
   text (m22: gemv's graph level declined one ``R.matmul`` twice, on the
   initial candidate and on its schedule child).
2. **Served.** A model's answer at that level on such a candidate made a
   correct child: the calls go to the children (m22: the graph level was asked
   on the initial layernorm and softmax candidates after their schedule
   child's graph request had been served there, and declined).
3. **Nothing in the lowered graph** (:func:`structure_reason`): ``graph`` when
   the graph lowers to one PrimFunc with one block and holds no TensorIR of
   its own (one operator, no intermediate: nothing to fuse or rewrite);
   ``schedule`` when no PrimFunc has
   a loop around a block left serial (every loop ``sch.get_loops`` reaches is
   already parallel, vectorized, unrolled or bound: m22 softmax #3, a
   hand-written row PrimFunc).

A closed level costs no model call: the policy does not open it
(:func:`~kstrata.agents.llm_agent.editable_on`), the router does not choose
it, and a proposer asked there anyway (a lookahead names its level) answers
with a skip (:func:`skipped`), stored like a decline and charged no call.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from kstrata.agents.base import ProposalBatch

LEVELS = ("graph", "schedule", "source")


def level_key(sources: Mapping[str, Any], level: str) -> str | None:
    """A digest of ``sources``' text at ``level`` and the levels above it
    (``None`` for an unknown level): two candidates with the same key show
    that level's role the same thing to edit."""
    if level not in LEVELS:
        return None
    upto = LEVELS[: LEVELS.index(level) + 1]
    texts = [(sources.get(lv) or "").strip() if isinstance(sources.get(lv), str) else "" for lv in upto]
    return hashlib.sha256(json.dumps([level, texts]).encode()).hexdigest()[:32]


def structure_reason(structure: Mapping[str, Mapping[str, int]] | None, level: str,
                     handwritten: bool = False) -> str | None:
    """Why ``level`` has nothing to edit in a lowered graph, from its
    structure (:func:`kstrata.backends.tvm.structure.graph_structure`:
    ``{primfunc: {"blocks", "open_loops"}}``), or ``None`` (something to
    edit, or the structure is unknown). A graph with ``handwritten``
    TensorIR (a ``@T.prim_func`` of its own) is the graph role's code, open
    however few blocks it has."""
    if not structure:
        return None
    if level == "graph" and len(structure) == 1 and not handwritten:
        (name, s), = structure.items()
        if s.get("blocks") == 1:
            return (f"nothing to edit at the graph level: the graph lowers to one PrimFunc ({name}) with one "
                    "block, one operator with no intermediate (nothing to fuse or rewrite)")
    if level == "schedule" and all(s.get("open_loops") == 0 for s in structure.values()):
        names = ", ".join(sorted(structure))
        return (f"nothing to edit at the schedule level: every loop around a block of {names} is already "
                "parallel, vectorized, unrolled or bound, and the loops inside a block's body are the graph's")
    return None


def skipped(level: str, why: str) -> ProposalBatch:
    """What a proposer returns instead of asking a role about a closed level:
    no proposal, no model call, and the decline record (role ``kstrata``,
    marked ``skipped``) the loop stores with the expansion."""
    return ProposalBatch([], [], skipped={"level": level, "role": "kstrata", "diagnosis": why[:1000],
                                          "requests": [], "skipped": True})


class ClosedLevels:
    """Which levels of which candidates are closed (rules in the module docstring).

    The loop's tree is read without sources, so the proposer reports the
    texts it sees (:meth:`observe`) and what lowering found (:meth:`observe_structure`).
    """

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()):
        #: candidate hash -> level -> level_key
        self.keys: dict[str, dict[str, str | None]] = {}
        #: ("h", hash) or ("k", level key) with a level -> why it is closed
        self.closed: dict[tuple[str, str, str], str] = {}
        #: (graph key, level) -> why the lowered graph leaves nothing at that level
        self.by_graph: dict[tuple[str, str], str] = {}
        #: candidate hash -> whether its graph text holds TensorIR of its own
        self.handwritten: dict[str, bool] = {}
        for h, level in pairs:
            self.close(h, level, "declined")

    def observe(self, h: str, sources: Mapping[str, Any]) -> None:
        """Record candidate ``h``'s texts (its level keys)."""
        self.keys[h] = {lv: level_key(sources, lv) for lv in LEVELS}
        graph = sources.get("graph")
        self.handwritten[h] = isinstance(graph, str) and "T.prim_func" in graph

    def observe_structure(self, h: str, structure: Mapping[str, Mapping[str, int]] | None) -> None:
        """Record what the lowering of ``h``'s graph leaves to edit (closes
        ``graph``/``schedule`` on every candidate with that graph text)."""
        gk = self._key(h, "graph")
        for lv in ("graph", "schedule"):
            why = structure_reason(structure, lv, self.handwritten.get(h, False))
            if why:
                self.by_graph[(gk or f"hash:{h}", lv)] = why

    def close(self, h: str, level: str, why: str) -> None:
        """Close ``level`` on ``h`` and on every candidate with its text there."""
        self.closed[("h", h, level)] = why
        key = self._key(h, level)
        if key:
            self.closed[("k", key, level)] = why

    def nothing_to_edit(self, node: Any, level: str) -> str | None:
        """Why the lowered graph of ``node`` leaves nothing at ``level`` (rule
        3; ``None``: something, or unknown). A proposer asked at a level only
        declined or served (rules 1 and 2) asks the model, with the earlier
        answers in the prompt: only the policy and the router leave those out."""
        gk = self._key(node.hash, "graph") or f"hash:{node.hash}"
        return self.by_graph.get((gk, level))

    def why(self, node: Any, level: str, tree: Any = None) -> str | None:
        """Why ``level`` is closed on ``node`` (``None``: open). ``tree`` adds
        the declines stored on it and the served rule."""
        h = node.hash
        key = self._key(h, level)
        for k in (("h", h, level), ("k", key, level) if key else None):
            if k in self.closed:
                return self.closed[k]
        nothing = self.nothing_to_edit(node, level)
        if nothing is not None:
            return nothing
        if tree is None:
            return None
        same = {h} | ({m for m, ks in self.keys.items() if ks.get(level) == key} if key else set())
        for d in tree.declines() if hasattr(tree, "declines") else []:
            if d.get("level") == level and d.get("candidate") in same:
                what = "skipped" if d.get("skipped") else f"the {d.get('role')} role declined"
                return f"{what} on {str(d['candidate'])[:8]}: {str(d.get('diagnosis') or '')[:200]}"
        for m in same:
            for c in _children(tree, m):
                if c.level == level and c.correct and str(getattr(c, "role", "") or "").endswith("-agent"):
                    return (f"served: a {level} answer on {m[:8]} made the correct child {c.hash[:8]} "
                            "(the next calls go to the children)")
        return None

    def open_levels(self, node: Any, levels: Iterable[str], tree: Any = None) -> list[str]:
        """Of ``levels``, those not closed on ``node``."""
        return [lv for lv in levels if self.why(node, lv, tree) is None]

    def _key(self, h: str, level: str) -> str | None:
        return (self.keys.get(h) or {}).get(level)


def _children(tree: Any, h: str) -> list[Any]:
    """The children of ``h`` in ``tree`` (a CandidateTree, or a mapping of nodes with ``children``)."""
    try:
        node = tree[h]
    except (KeyError, TypeError):
        return []
    out = []
    for c in getattr(node, "children", None) or []:
        try:
            out.append(tree[c])
        except KeyError:
            continue
    return out
