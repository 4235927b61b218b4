"""Search policies, by name (``greedy``, ``beam``, ``uct``, ``map-elites``)."""

from __future__ import annotations

from typing import Any

from kstrata.search.policies.base import Expansion, Policy, default_router
from kstrata.search.policies.beam import BeamPolicy
from kstrata.search.policies.greedy import GreedyPolicy
from kstrata.search.policies.map_elites import MapElitesPolicy
from kstrata.search.policies.uct import UCTPolicy

POLICIES: dict[str, type[Policy]] = {
    "greedy": GreedyPolicy,
    "beam": BeamPolicy,
    "uct": UCTPolicy,
    "map-elites": MapElitesPolicy,
}


def make_policy(policy: str | Policy, **params: Any) -> Policy:
    """A policy object from its name (with constructor ``params``) or as given.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    if isinstance(policy, Policy):
        return policy
    try:
        cls = POLICIES[policy.replace("_", "-")]
    except KeyError:
        raise ValueError(f"unknown policy {policy!r}; choose one of {sorted(POLICIES)}") from None
    return cls(**params)


__all__ = [
    "POLICIES",
    "BeamPolicy",
    "Expansion",
    "GreedyPolicy",
    "MapElitesPolicy",
    "Policy",
    "UCTPolicy",
    "default_router",
    "make_policy",
]
