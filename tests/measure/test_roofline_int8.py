"""Roofline ceilings for an int8 task (w8a8_gemm): timing one raised KeyError: 'int8'
for every candidate, an honest one too (red-team 2026-12-04)."""

from __future__ import annotations

from kstrata.measure.roofline import DTYPES, measure_ceilings


def test_int8_ceilings_are_measured():
    assert "int8" in DTYPES
    c = measure_ceilings("cpu", "int8", reps=1)
    assert c.dtype == "int8" and c.bandwidth_gbs > 0 and c.gflops > 0
