"""The search-policy interface and the default level router.

A policy has the lifecycle of a MetaSchedule search strategy:
``pre_search(tree, levels)`` once (also on resume) → repeatedly
``select(tree, rng)`` which names the node to expand and optionally the level →
``notify(tree, new_nodes)`` once their evaluations are stored →
``post_search(tree)``. Policies derive their choices from the tree alone (plus
the seeded ``rng``), so a resumed run chooses what an uninterrupted one would.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass

from kstrata.search.tree import CandidateTree, Node


@dataclass(frozen=True)
class Expansion:
    """Expand ``node`` at ``level`` (``None``: let the router choose) because of ``reason``."""

    node: str
    level: str | None = None
    reason: str = ""


class Policy(ABC):
    """Chooses which candidate to expand next (and, optionally, at which level).

    Parameters
    ----------
    max_per_level:
        How many times one node may be expanded at one level. 1 suits the
        deterministic built-in proposer (a second call proposes the same);
        LLM proposers may use more.
    """

    name = "policy"

    def __init__(self, max_per_level: int = 1):
        if max_per_level < 1:
            raise ValueError("max_per_level must be >= 1")
        self.max_per_level = max_per_level
        self.levels: tuple[str, ...] = ()

    def params(self) -> dict:
        """Constructor parameters, saved in the run config."""
        return {"max_per_level": self.max_per_level}

    # -- lifecycle ---------------------------------------------------------
    def pre_search(self, tree: CandidateTree, levels: tuple[str, ...]) -> None:
        """Called once before the first ``select`` of a session (fresh or resumed)."""
        self.levels = tuple(levels)

    @abstractmethod
    def select(self, tree: CandidateTree, rng: random.Random) -> Expansion | None:
        """The next expansion, or ``None`` when the policy has nothing left to try."""

    def notify(self, tree: CandidateTree, new_nodes: list[Node]) -> None:
        """Called after the candidates of an expansion have been evaluated."""

    def post_search(self, tree: CandidateTree) -> None:
        """Called once when the search stops."""

    # -- helpers -----------------------------------------------------------
    def open_levels(self, node: Node) -> list[str]:
        """Levels at which ``node`` may still be expanded."""
        return [lv for lv in self.levels if node.expansions[lv] < self.max_per_level]

    def expandable(self, tree: CandidateTree, node: Node) -> bool:
        """Evaluated, correct (or the root, which a proposer may repair), with an open level."""
        ok = node.correct or (tree.root is node)
        return node.evaluated and ok and bool(self.open_levels(node))

    def exhausted_why(self, tree: CandidateTree) -> str:
        """Why :meth:`select` found nothing, in words (the loop's stop reason)."""
        if not tree.ranked():
            return "no candidate is correct and the start cannot be expanded again"
        return (f"every correct candidate was expanded {self.max_per_level}x (max_per_level) at each of its "
                f"levels ({', '.join(self.levels)}); a proposer that gives the same answer again gains nothing "
                "from more")

    def fallback(self, tree: CandidateTree) -> Expansion | None:
        """Expand the root when nothing is correct yet (so a proposer can repair it)."""
        root = tree.root
        if root is not None and not tree.ranked() and self.expandable(tree, root):
            return Expansion(root.hash, None, "nothing correct yet: repair the initial candidate")
        return None


def default_router(
    tree: CandidateTree, node: Node, levels: list[str], preference: tuple[str, ...]
) -> tuple[str, str]:
    """Pick the level of ``levels`` at which ``node`` was expanded least, ties
    broken by ``preference`` order. Returns ``(level, reason)``. The feedback
    router of the agents replaces this (same signature)."""
    order = {lv: i for i, lv in enumerate(preference)}
    level = min(levels, key=lambda lv: (node.expansions[lv], order.get(lv, len(order))))
    n = node.expansions[level]
    # the reason is stored on the children this expansion makes and shown beside them (kstrata tree):
    # it names the candidate that was asked, not "this node"
    return level, (f"levels take turns: {level} edits asked of {node.hash[:8]} "
                   + ("for the first time" if n == 0 else f"again (asked {n}x before)"))
