"""Re-timing a doubtful timing inside one timing call.

A paired timing is doubtful when it stayed noisy after the timer's own
re-measuring (relative IQR over the threshold) or carries a suspicious finding
(under the roofline floor, overhead-dominated). A would-be best timed that way
is timed again before anyone believes it
(:class:`kstrata.search.evaluators.VerifyMeasureEvaluator`). :func:`retimed`
does those re-timings in the timing call that took the first one, with the
candidate and baseline processes it already built
(:func:`kstrata.measure.candidate.time_candidate`), instead of a new call per
re-timing that rebuilds the candidate (a TVM build in a fresh candidate
process: 2-8 s on this 2-core machine, most of a search timing call) and
restarts the baseline's process. Every re-timing is a whole
:func:`kstrata.measure.timing.measure` of its own: inputs staged again, the
round trip calibrated again, and its timed calls checked against the oracle
(first, last and a random share), so a candidate that changes behaviour in a
later timing is still caught.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kstrata.measure.remote import TimedOutputMismatch


def doubtful(m: Any) -> bool:
    """Whether timing ``m`` is not to be believed as it is: still noisy after
    re-measuring, or with a suspicious finding (e.g. under the roofline floor)."""
    return bool(getattr(m, "noisy", False) or getattr(m, "suspicious", None))


def retimed(first: Any, again: Callable[[int], Any], retimes: int, above: float | None) -> Any:
    """``first``, or the first of up to ``retimes`` re-timings that is not doubtful.

    Parameters
    ----------
    first:
        The :class:`~kstrata.measure.timing.Measurement` just taken.
    again:
        ``again(k) -> Measurement``: re-timing number ``k`` (1-based) with the
        same built candidate and baseline.
    retimes:
        At most this many re-timings.
    above:
        Re-time only when ``first``'s speedup point is above this (a would-be
        best of the search); ``None``: never.

    Returns
    -------
    Measurement
        The first re-timing that is not doubtful, with ``retimes`` set to the
        doubtful ones before it (``to_dict()`` of each, ``first``'s first); or,
        when every re-timing stayed doubtful or one failed, ``first`` with
        ``retimes`` set to the later timings (``{"error": "..."}`` for the one
        that failed; re-timing stops there). ``retimes`` stays empty when no
        re-timing was taken.

    Raises
    ------
    TimedOutputMismatch
        When a re-timing's checked outputs differ from the oracle: the
        candidate behaved differently in a later timing.
    """
    point = getattr(getattr(first, "speedup", None), "point", None)
    if above is None or retimes <= 0 or point is None or point <= above or not doubtful(first):
        return first
    tried: list[dict] = []
    for k in range(1, retimes + 1):
        try:
            m = again(k)
        except TimedOutputMismatch:
            raise
        except Exception as e:  # noqa: BLE001 - the first timing stands, as doubtful
            tried.append({"error": f"{type(e).__name__}: {e}"[:500]})
            break
        if not doubtful(m):
            m.retimes = [without_retimes(first)] + tried
            return m
        tried.append(without_retimes(m))
    first.retimes = tried
    return first


def without_retimes(m: Any) -> dict:
    """``m.to_dict()`` without its ``retimes`` (what a run's store keeps of a timing)."""
    d = m.to_dict()
    d.pop("retimes", None)
    return d
