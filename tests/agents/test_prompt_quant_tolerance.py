"""The prompt states the tolerance the judge applies to a quantization task
(queue-model round of 2026-12-04: it stated the cosine/rel-L1/RMSE metrics
alone, within which a truncating or off-by-one-clamped int8 kernel looked
correct, while the judge holds int8 outputs to the reference's codes)."""

from __future__ import annotations

from kstrata.agents.prompt import _describe_tolerance
from kstrata.tasks.loader import resolve_task
from kstrata.verify.tolerance import QUANT_ELEMENT_K


def test_quant_tolerance_names_the_integer_rule_and_the_element_cap():
    tol = resolve_task("quantize_per_channel").meta.tolerance
    assert tol.kind == "quant"
    text = _describe_tolerance(tol, "float32")
    assert "integer outputs" in text and "within rounding of a tie" in text and "truncation" in text
    assert f"cosine similarity >= {tol.cosine}" in text and f"{QUANT_ELEMENT_K:g} x that RMSE allowance" in text
