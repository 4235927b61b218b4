"""MAP-Elites archive (Mouret & Clune, "Illuminating search spaces by mapping
elites", arXiv:1504.04909, 2015): keep the best candidate of each behaviour
cell and expand from a cell drawn uniformly at random, so several strategies
stay alive instead of collapsing onto one.

A cell is ``(level edited, bound, tiling class)``: the level of the edit that
made the candidate (``initial`` for the root), ``memory``/``compute`` from the
measurement's roofline position (or the candidate's metadata ``bound``), and
the ``tiling_class`` string from the candidate's metadata (``none`` if unset).
"""

from __future__ import annotations

import random

from kstrata.search.policies.base import Expansion, Policy
from kstrata.search.tree import CandidateTree, Node


def descriptor(node: Node) -> tuple[str, str, str]:
    """The behaviour cell of ``node``."""
    return (
        node.level or "initial",
        node.bound or "unknown",
        str(node.metadata.get("tiling_class", "none")),
    )


class MapElitesPolicy(Policy):
    """Uniform selection among the elites of the behaviour cells."""

    name = "map-elites"

    def archive(self, tree: CandidateTree) -> dict[tuple[str, str, str], Node]:
        """Cell → best correct candidate in it (ties: the earlier)."""
        cells: dict[tuple[str, str, str], Node] = {}
        for node in tree.ranked():
            cells.setdefault(descriptor(node), node)
        return cells

    def select(self, tree: CandidateTree, rng: random.Random) -> Expansion | None:
        """Draw a cell uniformly among those with something left to expand and
        expand its best expandable member: the elite, or once the elite is
        exhausted (a deterministic proposer has nothing new for it) the next
        best, so a cell is never abandoned while it has untried members."""
        members: dict[tuple[str, str, str], list[Node]] = {}
        for node in tree.ranked():
            if self.expandable(tree, node):
                members.setdefault(descriptor(node), []).append(node)
        if not members:
            return self.fallback(tree)
        cell = rng.choice(sorted(members))
        node = members[cell][0]
        n_cells = len(self.archive(tree))
        reason = f"map-elites: cell {'/'.join(cell)} best open {node.score:.3g} ({n_cells} cells)"
        return Expansion(node.hash, None, reason)
