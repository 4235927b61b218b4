"""The feedback router: which level (and so which agent) edits a node next.

Signature as the loop's ``router=`` hook
(:data:`kstrata.search.loop.Router`): ``router(tree, node, open_levels,
preference) -> (level, reason)``; the loop stores the reason with the
expansion and with each candidate it makes (``router_reason``).

The rule, first match wins:

1. **Rebuild.** ``node`` was made by a graph change whose schedule was
   replayed (``metadata["replay"]``) and it has no schedule-level expansion
   yet → ``schedule``, so the schedule agent (or the rules) regenerates what
   no longer applies (the reason names the failed steps).
2. **Cross-level request.** An agent on ``node``'s lineage asked for a change
   at another level (``metadata["cross_level_request"]``, parsed from a
   ``CROSS-LEVEL REQUEST: <level>: <text>`` line of its answer) and no node on
   the path from the requester down to ``node`` was made at that level yet →
   that level.
3. **Routed feedback.** Every feedback item of ``node`` (verifier items and
   profiler findings) with a level tag adds its confidence to that level's
   score: a finding's own ``confidence``; a verifier item's ``confidence`` if
   it has one, else :data:`KIND_CONFIDENCE` by kind (0.5 for other kinds).
   A failed verdict with no tagged item adds 0.6 to the level ``node`` was
   made at (its own edit most likely broke it). The highest score among the
   open levels wins if it reaches ``min_score`` (ties: ``preference`` order).
4. Otherwise round-robin (:func:`kstrata.search.policies.default_router`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kstrata.search.policies import default_router

LEVELS = ("graph", "schedule", "source")

#: confidence of a verifier feedback item without one, by kind
KIND_CONFIDENCE = {
    "compile_error": 0.9, "build_error": 0.9, "schedule_error": 0.9, "lowering_error": 0.9,
    "integrity": 0.8, "incorrect": 0.6, "mismatch": 0.6, "runtime_error": 0.6, "timeout": 0.5,
}
_FAILED_VERDICT_CONFIDENCE = 0.6

_REQUEST = re.compile(r"^\W*CROSS-LEVEL REQUEST\s*:\s*(graph|schedule|source)\s*[:\-]\s*(.+?)\s*$",
                      re.IGNORECASE | re.MULTILINE)


def parse_cross_level_requests(text: str) -> list[dict[str, str]]:
    """``[{"level", "text"}]`` for each ``CROSS-LEVEL REQUEST: <level>: <text>``
    line of an agent's answer (case-insensitive; leading ``-``/``*`` allowed)."""
    return [{"level": m.group(1).lower(), "text": m.group(2)[:500]} for m in _REQUEST.finditer(text or "")]


@dataclass(frozen=True)
class Signal:
    """One piece of routed feedback: the level it points at, how sure, and what."""

    level: str
    confidence: float
    source: str
    text: str


def signals(node: Any) -> list[Signal]:
    """The level-tagged feedback of ``node`` (see the module docstring, rule 3)."""
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
    for f in (fb.get("measurement") or {}).get("findings") or []:
        if isinstance(f, Mapping) and f.get("level") in LEVELS:
            conf = f.get("confidence")
            conf = float(conf) if isinstance(conf, (int, float)) else 0.5
            out.append(Signal(f["level"], conf, "profiler", str(f.get("text", ""))))
    verdict = fb.get("verdict")
    if verdict not in (None, "correct") and not out and getattr(node, "level", None) in LEVELS:
        out.append(Signal(node.level, _FAILED_VERDICT_CONFIDENCE, f"verdict:{verdict}",
                          f"{verdict} after a {node.level} change"))
    return out


def pending_requests(tree: Any, node: Any) -> list[dict[str, Any]]:
    """Cross-level requests on ``node``'s lineage that nothing has served yet,
    nearest first: ``[{"level", "text", "by", "role"}]``."""
    path = tree.path_to_root(node.hash)  # node, parent, ..., root
    out = []
    for i, anc in enumerate(path):
        for req in (anc.metadata or {}).get("cross_level_request") or []:
            served = any(n.level == req.get("level") for n in path[:i])
            if not served and req.get("level") in LEVELS:
                out.append({**req, "by": anc.hash, "role": anc.role})
    return out


class FeedbackRouter:
    """The router of the hierarchical agent (rules in the module docstring).

    Parameters
    ----------
    min_score:
        Least summed confidence for rule 3 to decide.
    rebuild:
        Rule 1 on/off.
    requests:
        Rule 2 on/off.
    """

    name = "feedback"

    def __init__(self, min_score: float = 0.3, rebuild: bool = True, requests: bool = True):
        self.min_score = min_score
        self.rebuild = rebuild
        self.requests = requests

    def __call__(self, tree: Any, node: Any, levels: list[str], preference: tuple[str, ...]) -> tuple[str, str]:
        meta = node.metadata or {}
        replay = meta.get("replay")
        if (self.rebuild and node.level == "graph" and replay is not None and "schedule" in levels
                and not node.expansions["schedule"]):
            failed = replay.get("failed") or []
            what = (f"{len(failed)} schedule step(s) no longer apply: "
                    + "; ".join(f"{s.get('func')}: {s.get('code', '')[:60]}" for s in failed[:3])
                    if failed else "all schedule steps replayed")
            return "schedule", f"rebuild after graph change {node.hash[:8]}: {what}"
        if self.requests:
            for req in pending_requests(tree, node):
                if req["level"] in levels:
                    return req["level"], (f"cross-level request from {req['role']} ({req['by'][:8]}): "
                                          f"{req['text'][:160]}")
        scores: dict[str, float] = {}
        why: dict[str, list[Signal]] = {}
        for s in signals(node):
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
