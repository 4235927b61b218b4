"""Newcomer nc25's verifier cases (case folders ``cases/nc25_*``)."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
REUSED = "nc25_output_buffer_reused"


@needs_sandbox
def test_an_output_buffer_kept_per_shape_and_returned_again_is_rejected(kstrata_eval):
    d = kstrata_eval(f"{REUSED}/bias_gelu.py", f"{REUSED}/bias_gelu_outbuf.py", "--no-time")
    assert (d["verdict"], d["check"]) == ("rejected", "output_reused"), d
    assert "overwrote a result" in str(d["evidence"]["message"]), d["evidence"]


@needs_sandbox
def test_a_fresh_output_each_call_is_correct_even_with_a_copy_kept(kstrata_eval):
    d = kstrata_eval(f"{REUSED}/bias_gelu.py", f"{REUSED}/bias_gelu_keeps_last.py", "--no-time")
    assert d["verdict"] == "correct", d


def test_still_alive_tells_a_kept_storage_from_freed_memory_and_split_outputs():
    import torch
    from torch.multiprocessing.reductions import StorageWeakRef

    from kstrata.sandbox.child import _still_alive

    def alive(outs, inputs=frozenset()):
        return _still_alive(outs, set(inputs), seen, torch.Tensor, StorageWeakRef)

    seen: dict = {}
    a = torch.randn(64)
    assert alive(list(torch.randn(8, 4).split(4))) == []  # one call's outputs sharing a storage
    assert alive([a]) == []
    assert alive([a[:32]]) == [0]  # still held: a later call returned it again
    del a
    b = torch.empty(64)  # may land at the freed address: a new storage all the same
    assert alive([b]) == []
    assert alive([b], {b.untyped_storage().data_ptr()}) == []  # an input's storage is no_output_alias's

