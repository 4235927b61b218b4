"""The evaluator that joins the verifier and the timer for the search loop.

``VerifyMeasureEvaluator.evaluate(task, backend, sources)`` verifies the
candidate (:func:`kstrata.verify.verify_candidate`, hidden tests from the run's
secret) and, when it is correct and the backend's timings mean something,
times it against each baseline (:func:`kstrata.measure.candidate.time_candidate`, one
paired timing per baseline). It returns ``(Evaluation, dict)``: the dict holds
what :func:`kstrata.search.candidate.to_measurement_record` reads. A timing that
fails (the candidate built for verification, so this is rare) is reported as a
``runtime_error`` evaluation with check ``timing``, never raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any


@dataclass
class VerifyMeasureEvaluator:
    """Verify, then time against ``baselines`` (the first is the one searched on).

    Parameters
    ----------
    secret:
        The run's secret for hidden tests (keep it out of prompts and the store).
    baselines:
        Baseline names for :func:`kstrata.measure.candidate.time_candidate`
        (``"eager"``, ``"compile"``, ``"metaschedule"``).
    pool:
        A :class:`kstrata.execute` worker pool shared across evaluations.
    preset:
        Integrity preset (``"strict"`` or ``"warn"``).
    timing_config:
        A :class:`kstrata.measure.timing.TimingConfig` or ``None`` for defaults.
    trials:
        MetaSchedule trials for the ``metaschedule`` baseline.
    """

    secret: str
    baselines: Sequence[str] = ("eager",)
    pool: Any = None
    preset: str = "strict"
    timing_config: Any = None
    trials: int = 64

    def evaluate(self, task: Any, backend: Any, sources: dict[str, str]) -> tuple[Any, Any]:
        from kstrata.measure.candidate import time_candidate
        from kstrata.verdict import Verdict
        from kstrata.verify import verify_candidate

        ev = verify_candidate(task, backend.name, sources, secret=self.secret, pool=self.pool,
                              preset=self.preset)
        if ev.verdict is not Verdict.CORRECT or not getattr(backend, "timing_meaningful", True):
            return ev, None
        speedups, raw, first = {}, {}, None
        for baseline in self.baselines:
            try:
                m = time_candidate(backend.name, task, sources, baseline=baseline,
                                   trials=self.trials, config=self.timing_config)
            except Exception as e:  # noqa: BLE001 - errors are data
                if first is None:
                    msg = f"timing against {baseline} failed: {type(e).__name__}: {e}"
                    return replace(ev, verdict=Verdict.RUNTIME_ERROR, check="timing",
                                   evidence={**ev.evidence, "message": msg}), None
                raw[baseline] = {"error": f"{type(e).__name__}: {e}"}
                continue
            first = first or m
            raw[baseline] = m.to_dict()
            if m.speedup is not None:
                speedups[baseline] = m.speedup
        position = ((first.roofline or {}).get("candidate") or {}) if first else {}
        return ev, {
            "median_ms": first.candidate.median,
            "speedups": speedups,
            "roofline_fraction": position.get("fraction"),
            "bound": position.get("bound"),
            "findings": list(first.suspicious),
            "raw": raw,
        }
