"""Newcomer nc24's verifier cases (case folders ``cases/nc24_*``)."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CACHING = "nc24_eps_small_flagged_as_caching"


@needs_sandbox
def test_a_scale_invariant_wrong_kernel_is_incorrect_not_accused_of_caching(kstrata_eval):
    d = kstrata_eval(f"{CACHING}/l2norm.py", f"{CACHING}/l2_eps_small.py", "--no-time")
    assert (d["verdict"], d["check"]) == ("incorrect", "tolerance"), d
    assert "near_zero" in str(d["feedback"]) and "epsilon" in str(d["feedback"]), d["feedback"]
