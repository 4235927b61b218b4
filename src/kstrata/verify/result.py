"""The result of verifying one candidate: :class:`Evaluation` (JSON round-trip)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from kstrata.verdict import Verdict


@dataclass
class Evaluation:
    """Everything the verifier found about one candidate.

    Attributes
    ----------
    verdict:
        The verdict kind (DESIGN.md).
    check:
        For ``rejected``: the integrity check that fired (a name in
        :data:`kstrata.verify.integrity.CHECKS`); for ``incorrect``:
        ``"tolerance"`` or ``"determinism"``; for errors: the stage.
    evidence:
        JSON-able evidence. Public tests are described by shape, seed and
        distribution; hidden tests only by their count.
    feedback:
        Located diagnosis for the agent, public tests only: items
        ``{"kind", "level", "text", "data"}``.
    public_tests, hidden_tests:
        Number of tests run in each stage.
    seconds:
        Wall-clock seconds of the protocol; ``load_seconds`` of it were spent
        building the candidate (compile time) at the public tests' shapes, as
        the candidate's process reports it (the hidden stage's builds are
        left out: a reported number could carry a hidden shape).
    versions:
        Library versions (torch, backend libraries, python).
    tolerance:
        The tolerance policy applied (task metadata plus dtype bounds).
    warnings:
        Integrity findings the preset only warns about.
    """

    verdict: Verdict
    check: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    feedback: list[dict[str, Any]] = field(default_factory=list)
    public_tests: int = 0
    hidden_tests: int = 0
    seconds: float = 0.0
    load_seconds: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)
    tolerance: dict[str, Any] = field(default_factory=dict)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    task: str = ""
    backend: str = ""
    preset: str = "strict"

    @property
    def correct(self) -> bool:
        return self.verdict is Verdict.CORRECT

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict; ``verdict`` is the verdict's string value."""
        d = asdict(self)
        d["verdict"] = self.verdict.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Evaluation":
        """Inverse of :meth:`to_dict`; unknown keys raise ``TypeError``."""
        known = {f.name for f in fields(cls)}
        extra = set(d) - known
        if extra:
            raise TypeError(f"unknown Evaluation keys: {sorted(extra)}")
        return cls(**{**d, "verdict": Verdict(d["verdict"])})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def summary(self) -> str:
        """One line: verdict, check and the first feedback or evidence message."""
        head = f"{self.verdict.value}" + (f" ({self.check})" if self.check else "")
        msg = self.evidence.get("message", "")
        return f"{head}: {msg}" if msg else head
