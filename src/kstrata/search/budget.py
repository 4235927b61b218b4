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

import math
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

#: keys accepted by :func:`parse_budget` (``--budget`` of optimize and bench) -> Budget field
BUDGET_ALIASES = {
    "evals": "evaluations", "evaluations": "evaluations",
    "wall": "wall_clock_s", "wall_s": "wall_clock_s", "wall_clock_s": "wall_clock_s",
    "calls": "proposer_calls", "proposer_calls": "proposer_calls",
    "tokens_in": "tokens_in", "tokens_out": "tokens_out",
    "cost": "cost_usd", "cost_usd": "cost_usd",
    "patience": "patience",
    "roofline": "target_roofline", "target_roofline": "target_roofline",
}
#: Budget fields that hold real numbers (the others are whole counts)
REAL_FIELDS = ("wall_clock_s", "cost_usd", "target_roofline")
#: Budget fields whose limit 0 lets a run do nothing at all (no evaluation
#: starts, not even the initial candidate's), with the word for what is counted;
#: ``calls=0`` and the token and cost limits still evaluate the initial candidate
NOTHING_AT_ZERO = {"evaluations": "evaluations", "wall_clock_s": "seconds"}


#: What to do for a run without a limit (newcomer nc16: "leave the key out for no limit", but a key left
#: out keeps the command's default, evals=40 for ``kstrata optimize``).
NO_UNLIMITED = ("no value means unlimited: for a long run give a large limit, e.g. evals=100000; a key left "
                "out keeps the command's default (its --help names it: kstrata optimize runs evals=40)")


class BudgetError(ValueError):
    """A budget text that cannot be used; the message names the item and the fix."""


def parse_budget(text: str) -> dict[str, float | int]:
    """Parse a ``--budget`` text: ``"evals=30,wall=600"`` -> ``{"evaluations": 30,
    "wall_clock_s": 600.0}`` (only the limits given; the caller decides what an
    unset limit means).

    Keys are those of :data:`BUDGET_ALIASES`: ``evals``, ``wall`` (seconds),
    ``calls``, ``tokens_in``, ``tokens_out``, ``cost`` (USD), ``patience``,
    ``roofline`` (a fraction in (0, 1]) and the :class:`Budget` field names.

    Raises
    ------
    BudgetError
        For a text of commas only, an item that is not ``KEY=VALUE``, an unknown key, a key given twice
        (also under two aliases), a value that is not a finite number, a
        negative limit, a zero limit that lets the run do nothing
        (:data:`NOTHING_AT_ZERO`: ``evals=0``, ``wall=0``), a fractional count,
        ``patience`` below 1 or ``roofline`` outside (0, 1].
    """
    out: dict[str, float | int] = {}
    given: dict[str, str] = {}
    if text.strip() and not text.replace(",", "").strip():
        raise BudgetError(f"--budget {text!r} holds no KEY=VALUE item; e.g. evals=30,wall=600 (leave "
                          "--budget out for the defaults)")
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = (x.strip() for x in item.partition("="))
        if not sep:
            raise BudgetError(f"--budget item {item!r} is not KEY=VALUE (e.g. evals=30,wall=600)")
        field = BUDGET_ALIASES.get(key)
        if field is None:
            raise BudgetError(f"--budget key {key!r} unknown; use one of {', '.join(sorted(BUDGET_ALIASES))}")
        if field in out:
            raise BudgetError(f"--budget {given[field]} and {item} both set {field}; keep one")
        try:
            num = float(value)
        except ValueError:
            raise BudgetError(f"--budget {key} must be a number, got {value!r}") from None
        if not math.isfinite(num):
            raise BudgetError(f"--budget {key}={value}: a limit must be a finite number; {NO_UNLIMITED}")
        if num < 0:
            raise BudgetError(f"--budget {key}={value}: a limit cannot be negative")
        if num == 0 and field in NOTHING_AT_ZERO:
            raise BudgetError(f"--budget {key}={value}: a run with 0 {NOTHING_AT_ZERO[field]} would evaluate "
                              f"nothing, not even the initial candidate; give a positive limit ({NO_UNLIMITED})")
        if field == "target_roofline" and not 0 < num <= 1:
            raise BudgetError(f"--budget {key}={value}: a roofline fraction is in (0, 1], e.g. 0.8")
        if field == "patience" and num < 1:
            raise BudgetError(f"--budget {key}={value}: patience counts expansions, at least 1")
        if field not in REAL_FIELDS and num != int(num):
            raise BudgetError(f"--budget {key}={value}: a count must be a whole number")
        out[field] = num if field in REAL_FIELDS else int(num)
        given[field] = item
    return out


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
