"""Budgets as hard limits, and the stopping rules of a search.

Spending is read from the run store's ledger, so it survives a resume and runs
can be compared at equal cost. Limits are checked before anything is spent:
no evaluation starts once ``evaluations`` is reached, no proposer call starts
once ``proposer_calls``, ``tokens_in``, ``tokens_out`` or ``cost_usd`` is reached,
and nothing starts once ``wall_clock_s`` is. Token and cost use are known only
after a call, so one call may overshoot those two by its own use; cap a call's
tokens in the provider to make them exact.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

#: ledger kind -> Budget attribute
LIMIT_KINDS = {
    "wall_s": "wall_clock_s",
    "evaluations": "evaluations",
    "proposer_calls": "proposer_calls",
    "tokens_in": "tokens_in",
    "tokens_out": "tokens_out",
    "cost_usd": "cost_usd",
}


@dataclass(frozen=True)
class Budget:
    """Hard limits of a run (``None`` = unlimited) and the stopping rules.

    Attributes
    ----------
    wall_clock_s:
        Seconds of search (summed over resumed sessions).
    evaluations:
        Candidates evaluated (verified and, if correct, timed).
    proposer_calls:
        Model calls made by proposers (one per propose call for rule-based ones).
    tokens_in, tokens_out:
        Prompt and completion tokens.
    cost_usd:
        Proposer cost in US dollars.
    patience:
        Stop after this many expansions without a new best.
    target_roofline:
        Stop once the best candidate reaches this fraction of the roofline (0–1].
    """

    wall_clock_s: float | None = None
    evaluations: int | None = 100
    proposer_calls: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    patience: int | None = None
    target_roofline: float | None = None

    @classmethod
    def from_dict(cls, data: dict) -> Budget:
        """Build from a mapping, rejecting unknown keys.

        Raises
        ------
        ValueError
            Naming the unknown keys and the known ones.
        """
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown budget keys {sorted(unknown)}; known: {sorted(known)}")
        return cls(**data)

    def to_dict(self) -> dict:
        return asdict(self)

    def left(self, spent: dict[str, float]) -> dict[str, float | None]:
        """Remaining amount per ledger kind (``None`` = unlimited)."""
        out: dict[str, float | None] = {}
        for kind, attr in LIMIT_KINDS.items():
            limit = getattr(self, attr)
            out[kind] = None if limit is None else max(0.0, limit - spent.get(kind, 0.0))
        return out

    def exhausted(self, spent: dict[str, float], kinds: tuple[str, ...]) -> str | None:
        """The first of ``kinds`` whose limit is reached, as a stop reason, or ``None``."""
        for kind in kinds:
            limit = getattr(self, LIMIT_KINDS[kind])
            if limit is not None and spent.get(kind, 0.0) >= limit:
                return f"budget: {LIMIT_KINDS[kind]} limit {limit:g} reached"
        return None
