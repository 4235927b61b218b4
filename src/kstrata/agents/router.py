"""The feedback router: which level (and so which agent) edits a node next.

Signature as the loop's ``router=`` hook
(:data:`kstrata.search.loop.Router`): ``router(tree, node, open_levels,
preference) -> (level, reason)``; the loop stores the reason with the
expansion and with each candidate it makes (``router_reason``).

Only levels that can be edited are chosen (:func:`editable_levels`): a level
the backend has, that changes what runs (TileLang's ``graph`` is a plan
nothing executes) and, for TVM's ``source``, that the candidate has text for
(the generated code is never shown in kstrata's process, so there is nothing
to edit until a source exists). The rule, first match wins:

Levels closed on ``node`` (``closed=``, :mod:`kstrata.agents.closed`:
declined or served on a candidate with the same text, nothing to edit in
the lowered graph; for the hierarchical agent also written by the
request/rebuild chain or superseded) are never chosen while another level is
open. A request made on ``node`` after its level closed there reopens it once.

1. **Rebuild.** ``node`` was made by a graph change whose schedule was
   replayed (``metadata["replay"]``), it has no schedule-level expansion
   yet, and the rebuild has something to do (:func:`rebuild_needed`: steps
   that no longer apply, or new PrimFuncs with loops no step reaches; not
   when the new PrimFuncs leave no loop to schedule) → ``schedule``, so the
   schedule agent (or the rules) regenerates what no longer applies (the
   reason names the failed steps).
2. **Cross-level request.** A pending request (:func:`pending_requests`):
   an agent on ``node``'s lineage or below it asked for a change at another
   level (``metadata["cross_level_request"]`` of a candidate it made, or a
   decline stored with an expansion, see :class:`Declined`) and nothing has
   served it yet → that level.
3. **Routed feedback.** Every feedback item of ``node`` (verifier items and
   profiler findings) with a level tag adds its confidence to that level's
   score: a finding's own ``confidence`` (none for the at-the-ceiling
   finding, "only less work helps", when a measured baseline is faster than
   ``node``, and none for the roofline's findings of a timing not believed,
   :func:`~kstrata.measure.profilers.findings.roofline_finding`); a verifier item's ``confidence`` if it has one, else
   :data:`KIND_CONFIDENCE` by kind (0.5 for other kinds).
   A failed verdict with no tagged item adds 0.6 to the level ``node`` was
   made at (its own edit most likely broke it), unless the judge itself
   failed (:func:`~kstrata.agents.run_history.judge_failure`). A numerical failure
   (``incorrect``) tagged at a level no agent edited on ``node``'s lineage
   (e.g. a hidden-test failure of a graph-only TVM candidate, tagged at its
   untouched default schedule) counts for the nearest level that was edited,
   else ``graph``; a tag at a level that cannot be edited counts the same way.
   The highest score among the open levels wins if it reaches ``min_score``
   (ties: ``preference`` order).
4. Otherwise round-robin (:func:`kstrata.search.policies.default_router`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kstrata.agents.closed import FEEDBACK_MIN_SCORE, REBUILD_REASON, ClosedLevels
from kstrata.agents.parse import (
    DIAGNOSIS_CHARS,
    REQUEST_CHARS,
    clip_marked,
    is_null_request,
    parse_cross_level_requests,
)
from kstrata.agents.run_history import judge_failure, role_label
from kstrata.measure.profilers.findings import DISTRUST_PREFIXES, ceiling_finding, roofline_finding
from kstrata.search.policies import default_router
from kstrata.search.tree import DECLINED_PREFIX

LEVELS = ("graph", "schedule", "source")

#: confidence of a verifier feedback item without one, by kind
KIND_CONFIDENCE = {
    "compile_error": 0.9, "build_error": 0.9, "schedule_error": 0.9, "lowering_error": 0.9,
    "integrity": 0.8, "incorrect": 0.6, "mismatch": 0.6, "runtime_error": 0.6, "timeout": 0.5,
}
_FAILED_VERDICT_CONFIDENCE = 0.6

#: first line of an expansion error that records a decline (JSON after it)
DECLINE_PREFIX = DECLINED_PREFIX
__all__ = [
    "Declined",
    "FeedbackRouter",
    "editable_levels",
    "parse_cross_level_requests",
    "pending_requests",
    "rebuild_needed",
    "signals",
    "text_levels",
    "tree_closed",
]


class Declined(RuntimeError):
    """An agent declined to edit its level (:class:`kstrata.agents.parse.Decline`).

    Raised from ``propose``; the loop stores ``str(self)`` as the expansion's
    error, so the decline is kept on the tree (``tree.expansion_log``), where
    :func:`declines` reads it back. ``calls`` are the model calls it cost.
    """

    #: the loop stores a decline without a traceback (it is an answer, not a failure)
    is_decline = True

    def __init__(self, level: str, role: str, diagnosis: str, requests: Iterable[Mapping[str, str]],
                 calls: list[Any] | None = None):
        self.record = {"level": level, "role": role, "diagnosis": clip_marked(diagnosis, DIAGNOSIS_CHARS),
                       "requests": [{"level": r["level"], "text": clip_marked(r["text"], REQUEST_CHARS)} for r in requests]}
        super().__init__(json.dumps(self.record, sort_keys=True))
        self.calls = list(calls or [])
        #: why earlier answers of the same call could not be used (a SEARCH text not found, ...): the loop
        #: counts them as malformed, so an unusable answer that a decline followed is not lost (newcomer nc18)
        self.problems: list[str] = []


def declines(tree: Any) -> list[dict[str, Any]]:
    """Every decline stored on ``tree``: ``[{"candidate", "expansion", "level",
    "role", "diagnosis", "requests"}]`` in expansion order
    (:meth:`kstrata.search.tree.CandidateTree.declines`; ``[]`` without a tree)."""
    return tree.declines() if tree is not None and hasattr(tree, "declines") else []


#: levels a backend family's agents can change (TileLang's graph is a plan nothing executes)
EDITABLE = {"tilelang": ("schedule", "source")}
#: levels that hold text only once an agent wrote them (TVM's source is generated at build time)
NEEDS_TEXT = {"tvm": ("source",)}
#: levels an initial candidate has when its sources are not loaded
ROOT_TEXT = {"tvm": ("graph", "schedule")}


def text_levels(tree: Any, node: Any) -> frozenset[str] | None:
    """The levels ``node`` has text for, from its loaded sources, its
    ``metadata["text_levels"]``, or its lineage (a source edit adds ``source``,
    a graph or schedule edit drops it); ``None`` when unknown."""
    srcs = getattr(getattr(node, "record", None), "sources", None) or {}
    if srcs:
        return frozenset(lv for lv, t in srcs.items() if isinstance(t, str) and t.strip())
    meta = getattr(node, "metadata", None) or {}
    if isinstance(meta.get("text_levels"), list):
        return frozenset(meta["text_levels"])
    backend = getattr(node, "backend", "") or ""
    root = ROOT_TEXT.get(backend.split("-")[0])
    if tree is None or root is None:
        return None
    for n in tree.path_to_root(node.hash):
        if n.level == "source":
            return frozenset((*root, "source"))
        if n.level in ("graph", "schedule"):
            return frozenset(root)
    return frozenset(root)


def derived_below(backend: str, level: str, levels: Iterable[str] = LEVELS) -> tuple[str, ...]:
    """The levels of ``levels`` below ``level`` that ``backend`` generates
    from the levels above them (:data:`NEEDS_TEXT`: TVM's source), so a
    change at ``level`` makes their text stale: the change's candidate drops
    them and is built from its edited level. A TileLang ``schedule`` holds
    overrides the ``source`` reads, not code generated from it: nothing is
    derived there."""
    order = [lv for lv in LEVELS if lv in tuple(levels)]
    if level not in order:
        return ()
    need = NEEDS_TEXT.get(backend.split("-")[0], ())
    return tuple(lv for lv in order[order.index(level) + 1:] if lv in need)


def editable_levels(backend: str, levels: Iterable[str], has_text: frozenset[str] | None = None) -> list[str]:
    """Of ``levels``, those an agent can edit on ``backend`` for a candidate
    with text at ``has_text`` (``None``: unknown, only the backend rule applies)."""
    family = backend.split("-")[0]
    allowed = EDITABLE.get(family, LEVELS)
    need = NEEDS_TEXT.get(family, ())
    return [lv for lv in levels
            if lv in allowed and not (lv in need and (has_text is None or lv not in has_text))]


@dataclass(frozen=True)
class Signal:
    """One piece of routed feedback: the level it points at, how sure, and what."""

    level: str
    confidence: float
    source: str
    text: str


def signals(node: Any, tree: Any = None, editable: Iterable[str] | None = None) -> list[Signal]:
    """The level-tagged feedback of ``node`` (see the module docstring, rule 3).

    With ``tree`` and ``editable`` (the levels that can be edited), a
    numerical failure tagged at a level no agent edited on ``node``'s lineage,
    or any tag at a level outside ``editable``, is moved to the level that can
    fix it (its text says from where)."""
    out = _raw_signals(node)
    if tree is None or editable is None:
        return out
    editable = list(editable)
    fb = node.feedback() if callable(getattr(node, "feedback", None)) else {}
    numerical = fb.get("verdict") == "incorrect"
    path = tree.path_to_root(node.hash) if getattr(node, "hash", None) in getattr(tree, "nodes", {}) else [node]
    edited = [n.level for n in path if n.level in editable]  # nearest first
    fixer = edited[0] if edited else ("graph" if "graph" in editable else (editable[0] if editable else None))
    moved = []
    for s in out:
        if fixer is not None and (s.level not in editable or (numerical and s.level not in edited)) \
                and s.level != fixer:
            why = ("cannot be edited here" if s.level not in editable
                   else "was not edited on this lineage, so it cannot have caused a numerical failure")
            s = Signal(fixer, s.confidence, s.source, f"{s.text} (tagged {s.level}, which {why})")
        moved.append(s)
    return moved


def _raw_signals(node: Any) -> list[Signal]:
    fb = node.feedback() if callable(getattr(node, "feedback", None)) else (node or {})
    out: list[Signal] = []
    for item in fb.get("evaluation") or []:
        if not isinstance(item, Mapping) or item.get("level") not in LEVELS:
            continue
        conf = item.get("confidence")
        if not isinstance(conf, (int, float)):
            conf = KIND_CONFIDENCE.get(str(item.get("kind", "")), 0.5)
        text = str(item.get("text") or item.get("message") or "")
        out.append(Signal(item["level"], float(conf), f"verifier:{item.get('kind', 'note')}", text))
    m = fb.get("measurement") or {}
    slower = any(isinstance(s, Mapping) and isinstance(s.get("value"), (int, float)) and s["value"] < 1
                 for s in m.get("speedups") or [])
    texts = [str(f.get("text", "")) if isinstance(f, Mapping) else str(f) for f in m.get("findings") or []]
    distrusted = any(t.startswith(DISTRUST_PREFIXES) for t in texts)
    for f in m.get("findings") or []:
        if slower and isinstance(f, Mapping) and ceiling_finding(str(f.get("text", ""))):
            continue  # "only less work helps", said of a candidate a measured baseline beats
        if distrusted and isinstance(f, Mapping) and roofline_finding(str(f.get("text", ""))):
            continue  # a roofline position read from a time not believed (m25: "memory-bound at 41%", contended)
        if isinstance(f, Mapping) and f.get("level") in LEVELS:
            conf = f.get("confidence")
            conf = float(conf) if isinstance(conf, (int, float)) else 0.5
            out.append(Signal(f["level"], conf, "profiler", str(f.get("text", ""))))
    verdict = fb.get("verdict")
    # the judge's own failure (out of memory, an evaluator exception) points at no level
    if verdict not in (None, "correct") and not out and getattr(node, "level", None) in LEVELS \
            and not judge_failure(node):
        out.append(Signal(node.level, _FAILED_VERDICT_CONFIDENCE, f"verdict:{verdict}",
                          f"{verdict} after a {node.level} change"))
    return out


def pending_requests(tree: Any, node: Any) -> list[dict[str, Any]]:
    """Cross-level requests for ``node`` that nothing has served yet, nearest
    first: ``[{"level", "text", "by", "role", "kind", "expansion"}]`` (``kind``:
    ``request`` from a candidate's metadata, ``decline`` from a stored decline;
    ``expansion``: the id of the expansion that made it, or ``None``).

    Requests are collected from ``node``'s lineage (itself and its
    ancestors): a request made at candidate ``R`` reaches ``R`` and the
    candidates below it, never ``R``'s parent, whose text lacks what ``R``'s
    role wrote (r7: a decline on a graph child, naming that child's
    functions, was shown to its parent's schedule level, which did not have
    them). It is served once a candidate at the requested level was made,
    after the request, from ``R`` or a candidate below ``R``, that did not
    fail verification (an answer that failed to compile served nothing: the
    request stays listed for the re-ask, queue round 4).
    """
    path = tree.path_to_root(node.hash)  # node, parent, ..., root
    raw: list[tuple[Any, dict[str, Any], int | None, str]] = []
    for anc in path:
        for req in (anc.metadata or {}).get("cross_level_request") or []:
            raw.append((anc, req, getattr(anc, "expansion_id", None), "request"))
    by_hash = {n.hash: n for n in path}
    for d in declines(tree):
        at = by_hash.get(d["candidate"])
        if at is None:
            continue
        for req in d["requests"]:
            raw.append((at, {**req, "role": role_label(d.get("role")), "diagnosis": d.get("diagnosis", "")},
                        d.get("expansion"), "decline"))
    out, seen = [], set()
    for at, req, made, kind in raw:
        level = req.get("level")
        # a stored request that asks for nothing ("graph: none needed", kept by an older parser)
        if level not in LEVELS or is_null_request(str(req.get("text") or "")) or _served(tree, at, level, made):
            continue
        key = (level, req.get("text"))
        if key in seen:
            continue
        seen.add(key)
        out.append({**req, "by": at.hash, "role": req.get("role") or at.role, "kind": kind, "expansion": made})
    return out


def _served(tree: Any, at: Any, level: str, made: int | None) -> bool:
    """Whether a candidate at ``level`` that did not fail verification was
    made after expansion ``made`` from ``at`` or one of its descendants (an
    edit of ``at``'s ancestor or sibling lacks what the requester saw, and a
    failed one changed nothing: they serve nothing)."""
    lineage = {at.hash}
    if hasattr(tree, "subtree"):
        lineage |= {n.hash for n in tree.subtree(at.hash)}
    for n in tree:
        if n.hash == at.hash or n.level != level or not n.parents or n.parents[0] not in lineage:
            continue
        if getattr(n, "evaluated", False) and not getattr(n, "correct", True):
            continue
        if made is None or n.expansion_id is None or n.expansion_id > made:
            return True
    return False


def tree_closed(tree: Any, node: Any, level: str) -> str | None:
    """Why ``level`` is closed on ``node`` from ``tree`` alone (a decline or
    skip stored on ``node``, or a correct child of a model's answer there:
    :meth:`kstrata.agents.closed.ClosedLevels.why` without the texts a
    proposer observed); ``None``: open."""
    return ClosedLevels().why(node, level, tree) if tree is not None else None


def rebuild_needed(replay: Mapping[str, Any] | None) -> str | None:
    """What a schedule rebuild after a graph change has to do, from the
    replay report (:func:`kstrata.backends.tvm.isolated.replay_after_graph_change`),
    or ``None`` when nothing: no report; no loop left to schedule in the new
    PrimFuncs (``structure``: every loop around a block is already parallel,
    vectorized or bound in the graph itself); or nothing changed (no step
    failed and every PrimFunc with loops to schedule has replayed steps).
    A report without ``structure`` (older runs) keeps the old rule: rebuild."""
    if not isinstance(replay, Mapping):
        return None
    failed = replay.get("failed") or []
    structure = replay.get("structure")
    if isinstance(structure, Mapping) and structure \
            and not any(s.get("open_loops") for s in structure.values() if isinstance(s, Mapping)):
        return None
    unscheduled = replay.get("unscheduled")
    if failed:
        return (f"{len(failed)} schedule step(s) no longer apply: "
                + "; ".join(f"{s.get('func')}: {s.get('code', '')[:60]}" for s in failed[:3]))
    if isinstance(unscheduled, list):
        return f"PrimFunc(s) {', '.join(unscheduled)} have loops no schedule step reaches" if unscheduled else None
    return "all schedule steps replayed"


class FeedbackRouter:
    """The router of the hierarchical agent (rules in the module docstring).

    Parameters
    ----------
    min_score:
        Least summed confidence for rule 3 to decide.
    backend:
        The backend name; with it, only :func:`editable_levels` are chosen.
    known_text:
        ``hash -> levels with text`` for candidates whose sources the caller
        has seen (the loop's tree is read without sources).
    failures_only:
        Rule 3 only for a failed verdict (the single agent: a correct node's
        levels go round-robin).
    rebuild:
        Rule 1 on/off.
    requests:
        Rule 2 on/off.
    levels:
        The backend's levels. When none of the levels the policy leaves open
        can be edited on a node (e.g. only TVM's ``source``, with no text), an
        editable one of these is chosen instead (a repeat expansion), so no
        role is asked to edit nothing.
    closed:
        ``closed(tree, node, level) -> why`` (``None``: open): levels with
        nothing left to edit on a node (:class:`kstrata.agents.closed.ClosedLevels`),
        never chosen while another level is open. Default: what the tree
        alone says (:func:`tree_closed`: a decline stored on the node, a
        correct child of a model's answer there).
    """

    name = "feedback"

    def __init__(self, min_score: float = FEEDBACK_MIN_SCORE, rebuild: bool = True, requests: bool = True,
                 backend: str | None = None,
                 known_text: Callable[[str], frozenset[str] | None] | None = None,
                 failures_only: bool = False, levels: Iterable[str] | None = None,
                 closed: Callable[[Any, Any, str], str | None] | None = None):
        self.failures_only = failures_only
        self.levels = tuple(levels) if levels is not None else None
        self.min_score = min_score
        self.rebuild = rebuild
        self.requests = requests
        self.backend = backend
        self.known_text = known_text
        self.closed = closed if closed is not None else tree_closed

    def editable(self, tree: Any, node: Any, levels: Iterable[str], open_only: bool = True) -> list[str]:
        """Of ``levels``, those an agent can edit on ``node`` (all without a
        backend) and, with ``open_only``, that are not closed there."""
        levels = list(levels)
        if self.backend is not None:
            has = self.known_text(node.hash) if self.known_text is not None else None
            levels = editable_levels(self.backend, levels, has if has is not None else text_levels(tree, node))
        return [lv for lv in levels if not open_only or self.closed(tree, node, lv) is None]

    def __call__(self, tree: Any, node: Any, levels: list[str], preference: tuple[str, ...]) -> tuple[str, str]:
        allowed = self.editable(tree, node, levels)
        skipped = [lv for lv in levels if lv not in allowed]
        note = f" (not {', '.join(skipped)}: nothing to edit there)" if skipped and allowed else ""
        if not allowed and self.levels:
            allowed = self.editable(tree, node, self.levels)
            if allowed:
                note = (f" (the open level(s) {', '.join(skipped)} have nothing to edit: "
                        f"choosing among {', '.join(allowed)} again)")
        if not allowed:
            # every level with text is closed on ``node``: never a level with
            # nothing to edit (TVM's ``source`` without text). The levels the
            # policy offered come first: with nothing open anywhere it offers
            # those closed only by a rule that guesses a repeat
            # (:func:`~kstrata.agents.llm_agent.editable_only`), and the proposer
            # asks there; another closed one is answered with a skip, at no call
            allowed = (self.editable(tree, node, levels, open_only=False)
                       or self.editable(tree, node, self.levels or levels, open_only=False))
            blank = [lv for lv in levels if lv not in allowed]
            if allowed:
                note = ((f" (not {', '.join(blank)}: nothing to edit there;" if blank else " (")
                        + f" {', '.join(allowed)} closed on this node: a proposer skips a level closed by a "
                        "decline or by structure, and asks again at one closed only by a repeat rule)")
        if allowed:
            levels = allowed
        level, reason = self._route(tree, node, levels, preference)
        return level, reason + note

    def _route(self, tree: Any, node: Any, levels: list[str], preference: tuple[str, ...]) -> tuple[str, str]:
        meta = node.metadata or {}
        replay = meta.get("replay")
        what = rebuild_needed(replay) if self.rebuild and node.level == "graph" else None
        if what is not None and "schedule" in levels and not node.expansions["schedule"]:
            return "schedule", f"{REBUILD_REASON} {node.hash[:8]}: {what}"
        if self.requests:
            for req in pending_requests(tree, node):
                if req["level"] in levels:
                    what = "decline and request" if req.get("kind") == "decline" else "cross-level request"
                    return req["level"], (f"{what} from {req['role']} ({req['by'][:8]}): "
                                          f"{clip_marked(req['text'], 160)}")
        scores: dict[str, float] = {}
        why: dict[str, list[Signal]] = {}
        failed = node.verdict not in (None, "correct") if hasattr(node, "record") else True
        for s in [] if self.failures_only and not failed else signals(node, tree, self.editable(tree, node, LEVELS) if self.backend else None):
            if s.level in levels:
                scores[s.level] = scores.get(s.level, 0.0) + s.confidence
                why.setdefault(s.level, []).append(s)
        if scores:
            order = {lv: i for i, lv in enumerate(preference)}
            level = min(scores, key=lambda lv: (-scores[lv], order.get(lv, len(order))))
            if scores[level] >= self.min_score:
                top = max(why[level], key=lambda s: s.confidence)
                others = ", ".join(f"{lv} {v:.2f}" for lv, v in sorted(scores.items()) if lv != level)
                return level, (f"feedback: {level} {scores[level]:.2f} from {len(why[level])} item(s)"
                               f"{'; ' + others if others else ''}; top {top.source} "
                               f"({top.confidence:.2f}): {top.text[:120]}")
        level, reason = default_router(tree, node, levels, preference)
        return level, f"no routed feedback; {reason}"
