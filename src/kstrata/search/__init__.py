"""Search: the candidate tree, policies, budgets and the optimize loop."""

from kstrata.search.budget import Budget
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.search.loop import Evaluator, RunResult, SearchSettings, optimize
from kstrata.search.policies import POLICIES, Expansion, Policy, make_policy
from kstrata.search.tree import CandidateTree, Node

__all__ = [
    "POLICIES",
    "Budget",
    "CandidateTree",
    "Evaluator",
    "Expansion",
    "Node",
    "Policy",
    "RunResult",
    "SearchSettings",
    "content_hash",
    "make_policy",
    "normalize_sources",
    "optimize",
]
