"""Run store: one SQLite database plus artifact files per run directory."""

from kstrata.store.records import (
    CandidateRecord,
    EvaluationRecord,
    ExpansionRecord,
    MeasurementRecord,
    Speedup,
    jsonable,
)
from kstrata.store.run_store import RunStore, StoreError

__all__ = [
    "CandidateRecord",
    "EvaluationRecord",
    "ExpansionRecord",
    "MeasurementRecord",
    "RunStore",
    "Speedup",
    "StoreError",
    "jsonable",
]
