"""Greedy best-first: always expand the fastest correct candidate that still
has an open level."""

from __future__ import annotations

import random

from kstrata.search.policies.base import Expansion, Policy
from kstrata.search.tree import CandidateTree


class GreedyPolicy(Policy):
    """Best-first by speedup against the primary baseline; among equal scores
    the node expanded least, then the earlier candidate.

    Equal scores are common where timings are not believed: every correct
    candidate with an untrusted timing scores 0 (:attr:`kstrata.search.tree.Node.score`),
    and so does every one on an untimed backend. Breaking those ties by
    creation order alone re-expanded the start up to ``max_per_level`` times
    per level (3 for an LLM) before any correct child was looked at."""

    name = "greedy"

    def select(self, tree: CandidateTree, rng: random.Random) -> Expansion | None:
        ranked = tree.ranked()  # best score first, ties by creation order
        order = sorted(range(len(ranked)), key=lambda i: (-ranked[i].score, sum(ranked[i].expansions.values()), i))
        for i in order:
            node = ranked[i]
            if self.expandable(tree, node):
                return Expansion(node.hash, None, f"greedy: rank {i + 1}, score {node.score:.3g}")
        return self.fallback(tree)
