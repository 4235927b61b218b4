"""UCT tree policy (Kocsis & Szepesvári, "Bandit based Monte-Carlo Planning",
ECML 2006): descend from the root, at each node choosing by UCB1 (Auer,
Cesa-Bianchi & Fischer 2002) between expanding the node itself and descending
into one of its children, until "expand" wins.

Reward of a candidate: ``r = (clip(ln speedup, -L, L) + L) / (2L)`` in [0, 1]
(L = ``reward_clip``, default 2.0, i.e. speedups 0.14x … 7.4x); a candidate
that is not correct gets 0, a correct untimed one 0.5 (speedup 1). The value of
a node is the mean reward of its subtree (each candidate under its first
parent); its visit count is the number of evaluated candidates there.

Score of an option: ``Q + c * sqrt(ln N / n)`` with ``N`` the visits of all
options at this node and ``n`` the option's own: a child's subtree size, or
for "expand here" the node's expansion count + 1 with the node's own reward as
``Q``. ``c = sqrt(2)`` is UCB1's constant, i.e. ``2 C_p`` with Kocsis &
Szepesvári's ``C_p = 1/sqrt(2)`` for rewards in [0, 1].
"""

from __future__ import annotations

import math
import random

from kstrata.search.policies.base import Expansion, Policy
from kstrata.search.tree import CandidateTree, Node


class UCTPolicy(Policy):
    """UCB1-guided descent that balances the best subtree against rarely tried ones."""

    name = "uct"

    def __init__(self, c: float = math.sqrt(2), reward_clip: float = 2.0, max_per_level: int = 1):
        super().__init__(max_per_level)
        self.c = c
        self.reward_clip = reward_clip

    def params(self) -> dict:
        return super().params() | {"c": self.c, "reward_clip": self.reward_clip}

    def reward(self, node: Node) -> float:
        """Reward in [0, 1] as described in the module docstring."""
        if not node.correct:
            return 0.0
        L = self.reward_clip
        x = min(L, max(-L, math.log(node.speedup) if node.speedup else 0.0))
        return (x + L) / (2 * L)

    def _stats(self, tree: CandidateTree) -> tuple[dict, dict, dict]:
        visits: dict[str, int] = {}
        total: dict[str, float] = {}
        alive: dict[str, bool] = {}
        for node in reversed(list(tree)):  # children come after their parents
            h = node.hash
            visits[h] = visits.get(h, 0) + (1 if node.evaluated else 0)
            total[h] = total.get(h, 0.0) + (self.reward(node) if node.evaluated else 0.0)
            alive[h] = alive.get(h, False) or self.expandable(tree, node)
            if node.parents:
                p = node.parents[0]
                visits[p] = visits.get(p, 0) + visits[h]
                total[p] = total.get(p, 0.0) + total[h]
                alive[p] = alive.get(p, False) or (alive[h] and node.correct)
        return visits, total, alive

    def select(self, tree: CandidateTree, rng: random.Random) -> Expansion | None:
        visits, total, alive = self._stats(tree)
        node = tree.root
        if node is None or not alive.get(node.hash):
            return None
        while True:
            options: list[tuple[Node | None, float, int]] = []
            if self.expandable(tree, node):
                options.append((None, self.reward(node), sum(node.expansions.values()) + 1))
            for c in tree.children(node.hash):
                if c.parents[0] == node.hash and c.correct and alive[c.hash]:
                    options.append((c, total[c.hash] / visits[c.hash], visits[c.hash]))
            n_all = sum(n for _, _, n in options)
            best, best_score = None, -math.inf
            for i, (child, q, n) in enumerate(options):
                score = q + self.c * math.sqrt(math.log(max(n_all, 1)) / n)
                if score > best_score:
                    best, best_score = i, score
            child, q, n = options[best]
            if child is None:
                return Expansion(node.hash, None, f"uct: Q={q:.3f} n={n} ucb={best_score:.3f}")
            node = child
