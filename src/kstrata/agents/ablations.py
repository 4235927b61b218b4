"""The hierarchical agent's ablation switches (``--ablate``), in a module that
imports no torch: the CLI checks ``--ablate`` before the task and backend
load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

ABLATION_NAMES = {"flat": ("flat", True), "linear": ("linear", True), "unrouted": ("unrouted", True),
                  "no-memory": ("memory", False), "no-lookahead": ("lookahead", False)}


@dataclass(frozen=True)
class Ablations:
    """Switches for ablation studies (defaults: the full hierarchical agent).

    Attributes
    ----------
    flat:
        One agent with the single-role prompt edits every level.
    linear:
        Linear history: expand the latest node (:class:`LinearPolicy`).
    unrouted:
        Round-robin levels (:func:`kstrata.search.policies.default_router`)
        instead of :class:`~kstrata.agents.router.FeedbackRouter`.
    memory:
        Short- and long-term memory in prompts, and learning.
    lookahead:
        The loop's lookahead after a slower graph change.
    """

    flat: bool = False
    linear: bool = False
    unrouted: bool = False
    memory: bool = True
    lookahead: bool = True

    @classmethod
    def parse(cls, spec: str | Mapping[str, bool] | Ablations | None) -> Ablations:
        """From ``"flat,no-memory"`` (the ``--ablate`` names of :data:`ABLATION_NAMES`),
        a mapping of field names to bools, or an :class:`Ablations`.

        Raises
        ------
        ValueError
            For an unknown name or field.
        """
        if spec is None:
            return cls()
        if isinstance(spec, Ablations):
            return spec
        if isinstance(spec, Mapping):
            known = {f.name for f in fields(cls)}
            bad = set(spec) - known
            if bad:
                raise ValueError(f"unknown ablation field(s) {sorted(bad)}; known: {sorted(known)}")
            return cls(**{k: bool(v) for k, v in spec.items()})
        values = {}
        for name in filter(None, (p.strip() for p in spec.split(","))):
            if name not in ABLATION_NAMES:
                raise ValueError(f"unknown ablation {name!r}; choose from {', '.join(ABLATION_NAMES)}")
            key, value = ABLATION_NAMES[name]
            values[key] = value
        return cls(**values)

    def names(self) -> list[str]:
        """The ``--ablate`` names that are on."""
        return [n for n, (k, v) in ABLATION_NAMES.items() if getattr(self, k) == v]
