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
   hand-written row PrimFunc). Also any level the backend finds empty in the
   candidate's text (:meth:`ClosedLevels.observe_empty`): TileLang's
   ``schedule`` when the source reads no ``SCHEDULE`` key, or on tilelang-c
   only ``threads`` (the queue round's tilelang-c run spent a call on a
   decline there).

With ``lineage=True`` (the hierarchical agent) three more rules read the tree
(rule 6 also without it, where nothing is timed):

4. **Written by the request/rebuild chain.** The candidate's text at that
   level was written by a model's answer in the chain of request-, rebuild-
   and lookahead-routed expansions that made the candidate, or in the
   change that started the chain (m23: a graph request served, then the
   rebuild's schedule; "levels take turns" then asked both roles again
   about what they had just written, and both declined; the same after a
   feedback-routed graph change and its rebuild or lookahead): the level
   counts as asked, unless routed feedback on the candidate points there
   (:func:`kstrata.agents.router.signals`).
5. **Superseded.** ``schedule``/``source`` of a candidate whose graph text a
   model's correct graph change has replaced elsewhere (a child, or a
   sibling made from a candidate with the same graph, m23 layernorm #7 and
   softmax #6), and that change's subtree reads at least as fast as this
   candidate: its feedback points at what that line already holds.

6. **Written here, nothing new.** The candidate was made by a model's
   answer at that level, and no routed feedback on it points at that level
   that its parent's did not already (:func:`written_here`: the same finding,
   its numbers aside; a failed verdict is new; the roofline's placement,
   "memory-bound at 47% of peak", is never new: it locates nothing). The
   role that wrote the text saw that feedback when it wrote it (m25:
   layernorm #4, softmax #4 and gemv #2 asked the schedule role again about
   the schedule it had written one call before, on "memory-bound at
   41%/12%/22% of peak" advice it had already followed; m26 layernorm #3 the
   same on a trusted reading; all declined). Without ``lineage`` (one agent
   for every level) the rule holds only where nothing is timed (m26:
   triton-interp asked the source role about its own rewrite three times):
   where timings come, one agent iterating on its own kernel is the search.

A level closed by a model's decline (1) or by rules 4-6 reopens, once, for a
cross-level request made on the candidate itself after it closed (m23
softmax #5: the schedule role's new measurement asked the graph role, which
had declined there): the request is shown in the role's prompt
(:func:`kstrata.agents.router.pending_requests`), and its answer closes it
again (a decline) or serves the request.

A closed level costs no model call: the policy does not open it
(:func:`~kstrata.agents.llm_agent.editable_on`), the router does not choose
it, and a proposer asked there anyway (a lookahead names its level) answers
with a skip (:func:`skipped`), stored like a decline and charged no call.
Only while something else is open: when no level of any candidate is, the
policy offers the levels closed by the rules that guess a repeat (2, 4, 5, 6:
:data:`REPEAT`) again, up to its per-level limit, marked as asked again, so
a search spends its budget (queue round: six of seven runs stopped with most
of it left) (:func:`kstrata.agents.llm_agent.editable_only`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from kstrata.agents.base import ProposalBatch
from kstrata.agents.parse import clip_marked
from kstrata.measure.profilers.findings import roofline_finding

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
    return ProposalBatch([], [], skipped={"level": level, "role": "kstrata", "diagnosis": clip_marked(why, 1000),
                                          "requests": [], "skipped": True})


#: router reasons of the expansions that form a request/rebuild chain (rule 4;
#: :class:`kstrata.agents.router.FeedbackRouter` words them)
REBUILD_REASON = "rebuild after graph change"
REQUEST_REASONS = ("cross-level request", "decline and request")
#: the loop's words for a lookahead expansion (``_Run.lookahead`` in :mod:`kstrata.search.loop`)
LOOKAHEAD_REASON = "lookahead "
CHAIN_REASONS = (REBUILD_REASON, LOOKAHEAD_REASON, *REQUEST_REASONS)
#: least summed confidence of routed feedback at a level (the router's ``min_score``)
FEEDBACK_MIN_SCORE = 0.3
#: closures a later request made on the candidate reopens (and so offered for requests in prompts)
SOFT = ("declined", "chain", "superseded", "written")
#: closures that only guess a model's next answer would repeat its last: when no level of any candidate is
#: left open, the policy asks at these again while budget is left
#: (:func:`kstrata.agents.llm_agent.editable_only`)
REPEAT = ("served", "chain", "superseded", "written")


class ClosedLevels:
    """Which levels of which candidates are closed (rules in the module docstring).

    The loop's tree is read without sources, so the proposer reports the
    texts it sees (:meth:`observe`) and what lowering found (:meth:`observe_structure`).
    ``lineage`` turns rules 4 to 6 on; ``untimed`` (a backend that times
    nothing) turns rule 6 on without it.
    """

    def __init__(self, pairs: Iterable[tuple[str, str]] = (), lineage: bool = False, untimed: bool = False):
        #: candidate hash -> level -> level_key
        self.keys: dict[str, dict[str, str | None]] = {}
        #: ("h", hash) or ("k", level key) with a level -> why it is closed
        self.closed: dict[tuple[str, str, str], str] = {}
        #: (graph key, level) -> why the lowered graph leaves nothing at that level
        self.by_graph: dict[tuple[str, str], str] = {}
        #: (candidate hash, level) -> why the backend finds nothing to edit there (:meth:`observe_empty`)
        self.empty: dict[tuple[str, str], str] = {}
        #: candidate hash -> whether its graph text holds TensorIR of its own
        self.handwritten: dict[str, bool] = {}
        self.lineage = lineage
        #: the backend times nothing (rule 6 holds without lineage)
        self.untimed = untimed
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

    def observe_empty(self, h: str, backend: Any, sources: Mapping[str, Any], levels: Iterable[str]) -> None:
        """Record the levels of ``h`` where ``backend`` finds nothing an edit
        could change (:meth:`kstrata.backends.base.Backend.level_empty`, e.g.
        a TileLang schedule level whose source reads no ``SCHEDULE`` key):
        closed like rule 3, so no model call is spent on them."""
        hook = getattr(backend, "level_empty", None)
        if not callable(hook):
            return
        texts = {k: v for k, v in sources.items() if isinstance(v, str)}
        for lv in levels:
            why = hook(texts, lv)
            if why:
                self.empty[(h, lv)] = why

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
        if (node.hash, level) in self.empty:
            return self.empty[(node.hash, level)]
        gk = self._key(node.hash, "graph") or f"hash:{node.hash}"
        return self.by_graph.get((gk, level))

    def why(self, node: Any, level: str, tree: Any = None) -> str | None:
        """Why ``level`` is closed on ``node`` (``None``: open). ``tree`` adds
        the declines stored on it, the served rule, the lineage rules and
        the reopening by a later request."""
        found = self.closure(node, level, tree)
        return None if found is None else found[1]

    def offered(self, node: Any, level: str, tree: Any = None) -> bool:
        """Whether a prompt on ``node`` offers requests to ``level``: open,
        or closed by a closure that a request reopens (:data:`SOFT`)."""
        found = self.closure(node, level, tree)
        return found is None or found[0] in SOFT

    def closure(self, node: Any, level: str, tree: Any = None) -> tuple[str, str] | None:
        """``(kind, why)`` of the closure of ``level`` on ``node``, ``None``
        when open; ``kind`` is ``declined``, ``structure``, ``skipped``,
        ``served``, ``chain``, ``superseded`` or ``written`` (module docstring)."""
        nothing = self.nothing_to_edit(node, level)
        if nothing is not None:
            return "structure", nothing
        h = node.hash
        key = self._key(h, level)
        same = {h} | ({m for m, ks in self.keys.items() if ks.get(level) == key} if key else set())
        records = [d for d in (tree.declines() if tree is not None and hasattr(tree, "declines") else [])
                   if d.get("level") == level and d.get("candidate") in same]
        if any(d.get("skipped") for d in records):
            d = next(d for d in records if d.get("skipped"))
            return "skipped", f"skipped on {str(d['candidate'])[:8]}: {clip_marked(str(d.get('diagnosis') or ''), 200)}"
        declined = next((self.closed[k] for k in (("h", h, level), ("k", key, level) if key else None)
                         if k in self.closed), None)
        if declined is None and records:
            d = records[-1]
            declined = f"the {d.get('role')} role declined on {str(d['candidate'])[:8]}: " \
                       f"{clip_marked(str(d.get('diagnosis') or ''), 200)}"
        last = max((d.get("expansion") or 0 for d in records), default=None)
        if declined is not None and not self._reopened(node, level, tree, last):
            return "declined", declined
        if tree is None or declined is not None:
            return None
        for m in same:
            for c in _children(tree, m):
                if c.level == level and c.correct and str(getattr(c, "role", "") or "").endswith("-agent"):
                    return "served", (f"served: a {level} answer on {m[:8]} made the correct child {c.hash[:8]} "
                                      "(the next calls go to the children)")
        if h not in getattr(tree, "nodes", {}):
            return None
        if self.lineage:
            chain = chain_written(tree, node, level)
            if chain is not None and not self._reopened(node, level, tree, None, feedback=True):
                return "chain", chain
            gone = self._superseded(tree, node, level)
            if gone is not None and not self._reopened(node, level, tree, None):
                return "superseded", gone
        # rule 6; for one agent only where nothing is timed, so no reading can be news (m26: triton-interp
        # asked the source role about the rewrite it had just made, three times, and it declined each time)
        here = written_here(tree, node, level) if self.lineage or self.untimed else None
        if here is not None and not self._reopened(node, level, tree, None):
            return "written", here
        return None

    def open_levels(self, node: Any, levels: Iterable[str], tree: Any = None) -> list[str]:
        """Of ``levels``, those not closed on ``node``."""
        return [lv for lv in levels if self.why(node, lv, tree) is None]

    def _key(self, h: str, level: str) -> str | None:
        return (self.keys.get(h) or {}).get(level)

    @staticmethod
    def _reopened(node: Any, level: str, tree: Any, after: int | None, feedback: bool = False) -> bool:
        """Whether a pending request for ``level`` made on ``node`` (after
        expansion ``after``, when given) reopens it, or, with ``feedback``,
        routed feedback on ``node`` points at ``level``."""
        if tree is None or node.hash not in getattr(tree, "nodes", {}):
            return False
        from kstrata.agents.router import pending_requests, signals  # the router builds on this module

        for r in pending_requests(tree, tree[node.hash]):
            if r["level"] == level and r["by"] == node.hash and (after is None or (r.get("expansion") or 0) > after):
                return True
        return feedback and sum(s.confidence for s in signals(tree[node.hash]) if s.level == level) \
            >= FEEDBACK_MIN_SCORE

    def _superseded(self, tree: Any, node: Any, level: str) -> str | None:
        """Rule 5: a model's correct graph change of ``node``'s graph text
        made elsewhere, whose subtree reads at least as fast as ``node``."""
        mine = getattr(tree[node.hash], "speedup", None)
        if level == "graph" or mine is None:
            return None
        path = tree.path_to_root(node.hash)
        same: set[str] = set()
        for n in path:  # node and its ancestors up to the edit that wrote its graph share its graph text
            same.add(n.hash)
            if n.level == "graph":
                break
        gk = self._key(node.hash, "graph")
        if gk:
            same |= {m for m, ks in self.keys.items() if ks.get("graph") == gk}
        on_path = {n.hash for n in path}
        for m in sorted(same):
            for c in _children(tree, m):
                if c.level != "graph" or c.hash in on_path or not c.correct \
                        or not str(getattr(c, "role", "") or "").endswith("-agent"):
                    continue
                best = max((n.speedup for n in tree.subtree(c.hash) if n.correct and n.speedup is not None),
                           default=None)
                if best is not None and best >= mine:
                    return (f"superseded: the graph change {c.hash[:8]} (from {m[:8]}, this candidate's graph) "
                            f"leads to {best:.3g}x against this candidate's {mine:.3g}x; a {level} change here "
                            "would tune the replaced design")
        return None


def chain_written(tree: Any, node: Any, level: str) -> str | None:
    """Rule 4: why ``level`` of ``node`` counts as asked, when a model's
    answer wrote it in the chain of request-, rebuild- and lookahead-routed
    expansions that made ``node``, or wrote the change that started that
    chain (a graph change routed by feedback, then its rebuild: the graph
    role wrote the graph the rebuild scheduled) (``None``: not so)."""
    if level not in LEVELS:
        return None
    passed = False
    for n in tree.path_to_root(node.hash):
        if n.level in LEVELS and LEVELS.index(n.level) < LEVELS.index(level):
            return None  # an upper-level change rebuilt this level's text: nobody wrote it since
        why = str(getattr(n, "router_reason", "") or "")
        in_chain = why.startswith(CHAIN_REASONS)
        if n.level == level and (in_chain or passed):
            if not str(getattr(n, "role", "") or "").endswith("-agent"):
                return None
            what = "in the request/rebuild chain" if in_chain else "in the change that started the chain"
            return (f"counts as asked: the {n.role} wrote this {level} text ({n.hash[:8]}, "
                    f"{why.split(':', 1)[0] or 'no router reason'}) {what} that made {node.hash[:8]}")
        if not in_chain:
            return None
        passed = True
    return None


def written_here(tree: Any, node: Any, level: str) -> str | None:
    """Rule 6: why ``level`` of ``node`` counts as asked, when a model's
    answer at ``level`` made ``node`` and no routed feedback on ``node`` at
    ``level`` is new against its parent's (``None``: not so). A finding is
    the same when its source and its words up to the first number are (a
    roofline finding's percentage moves with every reading)."""
    from kstrata.agents.router import signals  # the router builds on this module

    n = tree[node.hash]
    path = tree.path_to_root(n.hash)
    if n.level != level or len(path) < 2 or not str(getattr(n, "role", "") or "").endswith("-agent"):
        return None
    seen = {_gist(s) for s in signals(path[1]) if s.level == level}
    new = [s for s in signals(n) if s.level == level and s.confidence > 0 and _gist(s) not in seen
           and not _position(s)]
    if new:
        return None
    return (f"counts as asked: the {n.role} wrote this {level} text ({n.hash[:8]}) and nothing new points at "
            f"the {level} level since (no routed feedback there that {path[1].hash[:8]}'s did not already have)")


def _position(signal: Any) -> bool:
    """Whether ``signal`` only places the candidate on the roofline ("memory-bound
    at 47% of peak bandwidth: stream memory with contiguous, vectorized accesses
    ..."): advice a role that just wrote the level has followed, not a fault it
    can locate (m26 layernorm #3: the schedule role, asked again on it, declined)."""
    return signal.source == "profiler" and roofline_finding(signal.text) \
        and not signal.text.startswith("faster than the roofline")


def _gist(signal: Any) -> tuple[str, str]:
    """A signal's source and its words before the first digit."""
    return signal.source, re.split(r"\d", signal.text, maxsplit=1)[0].strip()


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
