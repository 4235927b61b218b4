"""Greedy best-first: always expand the fastest correct candidate that still
has an open level."""

from __future__ import annotations

import random

from kstrata.search.policies.base import Expansion, Policy
from kstrata.search.tree import CandidateTree


class GreedyPolicy(Policy):
    """Best-first by speedup against the primary baseline (ties: earlier candidate)."""

    name = "greedy"

    def select(self, tree: CandidateTree, rng: random.Random) -> Expansion | None:
        for rank, node in enumerate(tree.ranked(), 1):
            if self.expandable(tree, node):
                return Expansion(node.hash, None, f"greedy: rank {rank}, score {node.score:.3g}")
        return self.fallback(tree)
