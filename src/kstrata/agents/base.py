"""The Proposer protocol: (task, candidate, feedback, level) → new candidates.

A proposer is anything that turns one candidate of the tree, the feedback its
evaluation produced and the level to edit into zero or more new candidates,
each with the role that made it and a rationale. The built-in deterministic
proposer (rules library + autotuner), the LLM agents per level and test fakes
all implement it; the search loop (:func:`kstrata.search.loop.optimize`) never
needs to know which.

Errors are data: a proposer may raise, or return malformed proposals; the loop
records both against the expansion and carries on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class ProposerCall:
    """One model call a proposer made (for the store and the budget).

    Attributes
    ----------
    provider, model:
        Who answered, e.g. ``"openai"``, ``"gpt-4.1"``; empty for rule-based proposers.
    prompt, response:
        Full texts as sent and received.
    tokens_in, tokens_out:
        Token counts reported by the provider.
    cost_usd:
        Cost in US dollars.
    latency_s:
        Wall-clock seconds of the call.
    error:
        The provider error as text, or ``None``.
    """

    provider: str = ""
    model: str = ""
    prompt: str = ""
    response: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = None


@dataclass(frozen=True)
class Proposal:
    """One new candidate.

    Attributes
    ----------
    sources:
        The complete sources ``{level: text}`` of the new candidate (use
        :meth:`edit` to change one level of a parent and keep the rest).
    level:
        The level that was edited (``graph``, ``schedule`` or ``source``).
    role:
        Who made it, e.g. ``"schedule-rules"``, ``"graph-agent"``.
    rationale:
        Why, in one or a few sentences (shown in the tree and the report).
    metadata:
        Free JSON data kept with the candidate. Keys the search reads:
        ``tiling_class`` (str, MAP-Elites descriptor), ``bound``
        (``"memory"``/``"compute"``, when known before timing).
    extra_parents:
        Hashes of further parents (crossover, or a cross-level request served).
    """

    sources: Mapping[str, str]
    level: str
    role: str
    rationale: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    extra_parents: tuple[str, ...] = ()

    @classmethod
    def edit(
        cls, parent_sources: Mapping[str, str], level: str, text: str, role: str, **kw: Any
    ) -> Proposal:
        """A proposal that replaces ``level`` of ``parent_sources`` with ``text``."""
        return cls(sources={**parent_sources, level: text}, level=level, role=role, **kw)


@dataclass
class ProposalBatch:
    """What one :meth:`Proposer.propose` call returns: proposals plus the model
    calls it made (empty for rule-based proposers).

    ``skipped``: the proposer asked no model because the level has nothing to
    edit on this candidate (:func:`kstrata.agents.closed.skipped`); the loop
    stores this decline record with the expansion (read back by
    :meth:`kstrata.search.tree.CandidateTree.declines`) and charges no call.

    ``problems``: why each answer the model gave was not usable (a
    SEARCH/REPLACE edit whose SEARCH text is not in the source, no code, a
    duplicate of a candidate the run has); the loop counts them as malformed
    proposals and stores them as the expansion's error (newcomer nc18: an
    unusable answer spent the only call and left no trace).
    """

    proposals: list[Proposal] = field(default_factory=list)
    calls: list[ProposerCall] = field(default_factory=list)
    skipped: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ProposeContext:
    """Run-level facts a proposer may use.

    Attributes
    ----------
    backend:
        The backend name.
    levels:
        The levels this backend's candidates have.
    step:
        Index of this expansion in the run (0-based); with ``seed`` it seeds any
        randomness so a resumed run proposes what an uninterrupted one would.
    seed:
        The run's seed.
    budget_left:
        Remaining budget per kind (``proposer_calls``, ``tokens_in``, ...);
        ``None`` values mean unlimited.
    router_reason:
        Why this level was chosen.
    tree:
        The candidate tree (:class:`kstrata.search.tree.CandidateTree`), read-only.
    timing_shape:
        The shape this run times candidates at, from its configuration
        (``--timing-shape``), or None when it was not recorded.
    """

    backend: str
    levels: tuple[str, ...]
    step: int = 0
    seed: int = 0
    budget_left: Mapping[str, float | None] = field(default_factory=dict)
    router_reason: str = ""
    tree: Any = None
    timing_shape: Mapping[str, int] | None = None


@runtime_checkable
class Proposer(Protocol):
    """Turns a candidate plus feedback into new candidates at one level.

    Attributes
    ----------
    name:
        Registry name stored with every candidate it makes.
    repairs:
        Optional (default True): whether its proposals can make an incorrect
        candidate correct. The built-in proposers set it False (they change
        parameters and schedules, never the computation), so a search of
        theirs from an incorrect or rejected start stops after the start
        (:meth:`kstrata.search.loop._Run.unfixable_start`); an LLM can rewrite it.
    """

    name: str

    def propose(
        self,
        task: Any,
        candidate: Any,
        feedback: Any,
        level: str,
        *,
        context: ProposeContext,
    ) -> ProposalBatch | list[Proposal]:
        """Propose new candidates.

        Parameters
        ----------
        task:
            The :class:`kstrata.tasks.base.Task`.
        candidate:
            The node to edit (:class:`kstrata.search.tree.Node`): ``sources``,
            ``level``, ``role``, ``metadata``, ``speedup``, ``verdict``.
        feedback:
            JSON data: ``{"verdict", "evaluation": <verifier feedback>,
            "measurement": {median_ms, speedups, roofline_fraction, bound,
            findings}}``.
        level:
            The level to edit.
        context:
            Run-level facts, see :class:`ProposeContext`.

        Returns
        -------
        ProposalBatch or list of Proposal
            Proposals (possibly none). May raise; the loop records the error.
        """
        ...


def validate_proposal(p: Any, levels: tuple[str, ...]) -> str | None:
    """Why ``p`` is not a usable :class:`Proposal` for a backend with ``levels``,
    or ``None`` when it is."""
    if not isinstance(p, Proposal):
        return f"not a Proposal: {type(p).__name__}"
    if p.level not in levels:
        return f"level {p.level!r} not one of {levels}"
    if not isinstance(p.sources, Mapping) or not p.sources:
        return "sources must be a non-empty {level: text} mapping"
    for level, text in p.sources.items():
        if level not in levels:
            return f"source level {level!r} not one of {levels}"
        if not isinstance(text, str):
            return f"source of level {level!r} is {type(text).__name__}, not str"
    if p.level not in p.sources:
        return f"edited level {p.level!r} has no source"
    if not isinstance(p.role, str) or not p.role:
        return "role must be a non-empty string"
    return None
