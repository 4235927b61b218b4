"""After a hidden failure, a public probe past every public size (queue round rt82's open item, reproduced in
rt89): a chunk loop that every public size runs once (a Triton gemv's x offset wrong past its first K chunk, a
LayerNorm whose mean is its first chunk's) passed every public test and every probe, all smaller than the public
shape, and the hidden-failure item named only "sizes 1, primes, non-multiples of any block size"."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task
from kstrata.verify.feedback import probe_shapes

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")


def test_probes_include_each_variable_at_its_largest_sweep_size_within_a_cost():
    gemv = probe_shapes(resolve_task("gemv"))
    # K = 4108: just past the sweep's largest K (4099) by more than a hidden size moves (PERTURB_MAX), so it
    # names no hidden size
    assert ({"M": 64, "K": 4108}) in [s for s, _ in gemv], gemv
    why = dict((tuple(s.items()), w) for s, w in gemv)[(("M", 64), ("K", 4108))]
    assert "past every public K and the task's largest sweep size" in why and "runs several times here" in why, why
    assert "4099" not in why
    assert len(gemv) <= 8 + 2 and {"M": 64, "K": 13} in [s for s, _ in gemv]  # the small ones stay
    # a 2053^3 GEMM is no probe (over LARGE_PROBE_FLOP): only the small ones
    assert all(s["N"] < 64 for s, _ in probe_shapes(resolve_task("matmul_square")))


@needs_sandbox
def test_a_chunk_loop_wrong_past_its_first_chunk_is_reproduced_by_a_public_probe(kstrata_eval):
    d = kstrata_eval("layernorm", "rt89_feedback/layernorm_chunk_mean.py", "--no-time")
    assert d["verdict"] == "incorrect" and d["evidence"].get("stage") == "hidden", d["evidence"]
    said = {i["kind"]: i["text"] for i in d["feedback"]}
    assert "sizes past every public one" in said["hidden_failure"], said
    assert "a public probe fails too: at shape B=8, D=65546" in said["public_probe"], said
    assert "wrong_share" in said, said
