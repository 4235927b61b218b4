"""``kstrata show RUN [CAND] --json``: one candidate as one JSON object, as
``kstrata eval --json`` prints one (newcomer nc21: ``show --json`` printed the
text view with only the feedback as JSON, which no JSON reader could take)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kstrata.search.views import best_note, reading, shown_candidate


def candidate_json(run_dir: str | Path, prefix: str | None = None) -> dict[str, Any]:
    """What ``kstrata show`` says of a candidate (:func:`~kstrata.search.views.shown_candidate`),
    as a JSON-able dict.

    Keys: ``run``, ``hash`` (full), ``best`` (shown as the run's best: no
    ``prefix`` given) with ``note`` (the text view's first line),
    ``level``, ``role``, ``proposer``, ``parents`` and ``path_to_root`` (full
    hashes, the candidate first), ``rationale``, ``router_reason``,
    ``verdict`` (``None``: not evaluated), ``check``, ``evidence`` (the
    verifier's, its ``message`` included), ``reduced_scope``, ``timing``
    (``None`` when not timed; else ``speedups`` ``[{baseline, value, ci_low,
    ci_high}]``, ``reading`` (re-timed or first timing), ``trusted``,
    ``roofline_fraction``, ``bound``; or ``{"failed": why}`` where the timing
    of a correct candidate failed), ``feedback`` (the stored JSON a proposer
    is given) and ``sources`` (``{level: text}``).

    Raises
    ------
    kstrata.store.StoreError
        As :func:`~kstrata.search.views.shown_candidate`.
    """
    tree, node, is_best = shown_candidate(run_dir, prefix)
    ev = node.record.evaluation
    timing: dict[str, Any] | None = None
    m = node.measurement
    if m is not None:
        r = reading(node)
        timing = {"speedups": [{"baseline": s.baseline, "value": s.value, "ci_low": s.ci_low, "ci_high": s.ci_high}
                               for s in m.speedups],
                  "reading": r.which if r is not None else None, "trusted": node.timing_trusted,
                  "roofline_fraction": node.roofline_fraction, "bound": node.bound}
    elif node.correct and node.timing_failure:
        timing = {"failed": node.timing_failure}
    return {
        "run": str(run_dir), "hash": node.hash, "best": is_best,
        **({"note": f"showing {best_note(node, run_dir)}"} if is_best else {}),
        "level": node.level, "role": node.role, "proposer": node.proposer, "parents": list(node.parents),
        "path_to_root": [n.hash for n in tree.path_to_root(node.hash)],
        "rationale": node.rationale or None, "router_reason": node.router_reason or None,
        "verdict": node.verdict, "check": ev.check if ev is not None else None,
        "evidence": ev.evidence if ev is not None else None, "reduced_scope": node.reduced_scope,
        "timing": timing, "feedback": node.feedback(), "sources": dict(node.sources or {}),
    }
