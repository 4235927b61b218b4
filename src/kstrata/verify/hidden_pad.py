"""How long a verification's hidden stage lasts, as its caller sees it: padded to a time fixed before it ran.

A client that times its own call (the MCP server's ``evaluate``, the RL
environment; ``service.evaluate`` returns ``wall_s`` besides) read the hidden
tests through the verification's duration: a candidate that passed every test
and computed 15 s at each hidden shape whose first size was odd made the
evaluation last 147-182 s instead of 19-30 s, a count of odd hidden sizes, and
the hidden shapes are the run's, the same for every submission, so such bits add
up (red team rt74, case ``tests/sandbox/cases/rt74_hidden_time_channel``). A cap
on each hidden call at k times the candidate's public pace (rt81's proposal)
bounds each call's share but not the channel: the candidate still chooses, per
hidden shape, between 1x and kx (and a slow public stage raises the cap), and
the judge's own work at a hidden test (its tie- and rounding-aware comparisons
run only for outputs the candidate makes borderline) is outside any candidate
cap.

So, as constant-time code pads a reply: where the duration is seen
(``pad_hidden``), the judge fixes a budget before the hidden stage from what is
already known to the caller or fixed for the run (:func:`budget_s`: the public
stage's wall time, scaled by the hidden plan's size over the public plan's),
and the stage (from its start to the verification's return: the hidden calls,
the judge's oracle, the process's close and scrub, a clean re-run) is padded to
the smallest rung ``budget x 2^j`` it fits (:func:`padded_s`). The duration then
tells the budget (the same for every candidate with the same public time) and
``j``: at most ``log2(limit / budget)`` values, a few bits per evaluation, the
order of the verdict's own bit (pass or fail on hidden tests), where it told
the hidden stage's length to the millisecond before. An honest stage costs up
to 2x its length (about 1.4x on average); verifications whose duration no one
outside the judge sees (a search's, ``kstrata eval``'s) are not padded.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

#: the smallest budget (s): a hidden stage shorter than this is padded to it
FLOOR_S = 1.0
#: the ratio of one rung to the next (:func:`padded_s`)
RUNG = 2.0
#: the share of the predicted length the budget is: a budget under the stage's length costs a rung or two
#: (at most 2x the length, and a bit each), one over it costs the whole difference in waiting
SHARE = 0.5
#: elements at which a test's own work is taken to equal its fixed cost (round trips, draws, the oracle's set-up)
SIZE_UNIT = 1 << 20

#: the latest pad of this process, for tests: ``{"budget_s", "elapsed_s", "padded_s", "slept_s", "end"}``
#: (``end``: ``time.monotonic()`` when the pad ended)
LAST: dict[str, float] = {}


def _cost(shape: dict[str, int]) -> float:
    """A test's predicted cost in units of a small test's: 1 plus its shape's
    product of positive sizes over :data:`SIZE_UNIT`."""
    return 1.0 + math.prod(v for v in shape.values() if isinstance(v, int) and v > 0) / SIZE_UNIT


def budget_s(public_s: float, public: Sequence[dict[str, int]], hidden: Sequence[dict[str, int]]) -> float:
    """The hidden stage's budget in seconds, fixed before it runs.

    Parameters
    ----------
    public_s:
        Wall seconds of the public stage (its process's start, the
        candidate's calls and the judge's work at the public tests); the
        caller saw it.
    public, hidden:
        The shapes (``{size name: value}``) of the public and the hidden tests,
        one per test: the plan, fixed by the task and the run's secret before
        any candidate call (never by the candidate).

    Returns
    -------
    float
        :data:`SHARE` of ``public_s`` times the hidden plan's summed
        :func:`_cost` over the public plan's, and at least :data:`FLOOR_S`.
        relu at the small scope (30 public tests of at most 4096 elements in
        13.2 s; 83 hidden ones and the nominal shape's): 22 s for a stage of
        36.6 s, padded to 44 s. Counted by elements alone (a linear cost) the
        one nominal-shape test made it 3330 s.
    """
    if not public or not hidden:
        return FLOOR_S
    return max(FLOOR_S, SHARE * public_s * sum(map(_cost, hidden)) / sum(map(_cost, public)))


def padded_s(elapsed_s: float, budget: float) -> float:
    """The smallest ``budget * RUNG**j`` (``j >= 0``) that is at least ``elapsed_s`` (seconds)."""
    budget = max(budget, 1e-3)
    if elapsed_s <= budget:
        return budget
    j = math.ceil(math.log(elapsed_s / budget, RUNG) - 1e-12)
    return budget * RUNG ** j


def pad(started: float, budget: float, end_by: float | None = None) -> float:
    """Sleep until the hidden stage that began at ``started`` (``time.monotonic()``)
    has lasted :func:`padded_s` of its elapsed time, but not past ``end_by``
    (``time.monotonic()``: where the judge's worker would be killed, a time the
    caller fixed); returns the seconds slept."""
    now = time.monotonic()
    target = started + padded_s(now - started, budget)
    if end_by is not None:
        target = min(target, end_by)
    slept = max(0.0, target - now)
    if slept:
        time.sleep(slept)
    LAST.clear()
    LAST.update(budget_s=budget, elapsed_s=now - started, padded_s=target - started, slept_s=slept,
                end=time.monotonic())
    return slept
