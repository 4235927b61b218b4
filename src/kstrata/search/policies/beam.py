"""Beam search of width k over generations of the tree.

Generation 0 is the root. Every node of a generation is expanded at each of its
open levels; generation g+1 is the k best correct children of generation g.
The beam is recomputed from the tree, so it needs no saved state.
"""

from __future__ import annotations

import random

from kstrata.search.policies.base import Expansion, Policy
from kstrata.search.tree import CandidateTree


class BeamPolicy(Policy):
    """Keep the ``width`` best candidates of each generation."""

    name = "beam"

    def __init__(self, width: int = 4, max_per_level: int = 1):
        super().__init__(max_per_level)
        if width < 1:
            raise ValueError("beam width must be >= 1")
        self.width = width

    def params(self) -> dict:
        return super().params() | {"width": self.width}

    def beam(self, tree: CandidateTree) -> tuple[int, list]:
        """``(generation, nodes)`` of the current beam: the first generation
        with a node still to expand, or the last one."""
        if tree.root is None:
            return 0, []
        frontier, gen = [tree.root], 0
        while not any(self.expandable(tree, n) for n in frontier):
            kids = {c.hash: c for n in frontier for c in tree.children(n.hash)}
            nxt = tree.ranked(list(kids.values()))[: self.width]
            if not nxt:
                break
            frontier, gen = nxt, gen + 1
        return gen, frontier

    def select(self, tree: CandidateTree, rng: random.Random) -> Expansion | None:
        gen, frontier = self.beam(tree)
        for rank, node in enumerate(frontier, 1):
            if self.expandable(tree, node):
                return Expansion(node.hash, None, f"beam: generation {gen}, rank {rank}/{len(frontier)}")
        return None
