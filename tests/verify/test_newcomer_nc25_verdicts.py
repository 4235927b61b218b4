"""Newcomer nc25's verifier cases (case folders ``cases/nc25_*``)."""

from __future__ import annotations

from pathlib import Path

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


HIDDEN = "nc25_hidden_failure_unlocated"


@needs_sandbox
def test_a_revealed_hidden_failure_is_located_and_its_inputs_can_be_drawn_again(kstrata_eval):
    import re

    import torch

    from kstrata import load_task
    from kstrata.verify.reproduce import draw_test

    # the newcomer's int8_quant_recip.py fails at rounding ties, which a random secret's draws may miss
    d = kstrata_eval(f"{HIDDEN}/int8_quant.py", f"{HIDDEN}/int8_quant_wide_trunc.py", "--no-time", "--show-hidden")
    assert (d["verdict"], d["evidence"]["stage"]) == ("incorrect", "hidden"), d
    said = re.match(r"(\d+) of (\d+) elements", d["evidence"]["message"])
    assert said, d["evidence"]
    kinds = [i["kind"] for i in d["feedback"]]
    assert "wrong_share" in kinds and "values" in kinds and "hidden_failure" not in kinds, kinds
    rep = next(i for i in d["feedback"] if i["kind"] == "reproduce")["data"]
    assert "draw_test(" in rep["code"] and str(rep["seed"]) in rep["code"]
    task = load_task(Path(__file__).parent / "cases" / HIDDEN / "int8_quant.py")
    model, xs = draw_test(task, rep["shape"], rep["param_seed"], rep["seed"], rep["distribution"])
    q, scale = model(*xs)
    x = xs[0]
    got = torch.cat([torch.round(x[..., :512] / scale), torch.trunc(x[..., 512:] / scale)], -1)  # the candidate's
    got = got.clamp(-127, 127).to(torch.int8)
    assert (int((got != q).sum()), q.numel()) == (int(said[1]), int(said[2]))


@needs_sandbox
def test_a_hidden_failure_stays_scrubbed_without_show_hidden(kstrata_eval):
    d = kstrata_eval(f"{HIDDEN}/int8_quant.py", f"{HIDDEN}/int8_quant_wide_trunc.py", "--no-time")
    assert (d["verdict"], d["evidence"]["stage"]) == ("incorrect", "hidden"), d
    assert not any(ch.isdigit() for ch in d["evidence"]["message"]), d["evidence"]
    assert [i["kind"] for i in d["feedback"]][0] == "hidden_failure", d["feedback"]
    # only a public probe may say where to reproduce it (queue round rt89: the larger-size probe past the task's
    # public sweep, a shape fixed by the task alone, now reproduces this wide-row fault); nothing else does
    assert all("reproduce" not in str(i) for i in d["feedback"] if i["kind"] != "public_probe"), d["feedback"]


MASK = "nc25_mask_bound_not_named"


@needs_sandbox
def test_an_off_by_one_mask_bound_is_named_after_the_integer_input(kstrata_eval):
    d = kstrata_eval(f"{MASK}/masked_softmax.py", f"{MASK}/masked_softmax_offby1.py", "--no-time")
    assert d["verdict"] == "incorrect", d
    bound = [i for i in d["feedback"] if i["kind"] == "index_bound"]
    assert bound and bound[0]["data"]["offset"] == 0 and "lengths[row] (input 1)" in bound[0]["text"], d["feedback"]


def test_index_hint_needs_the_error_at_the_inputs_value_in_most_wrong_rows():
    import torch

    from kstrata.verify.index_hint import index_hint

    class Ref(torch.nn.Module):
        def forward(self, x, lengths):
            keep = torch.arange(x.shape[-1])[None, :] < lengths[:, None]
            return torch.softmax(x.masked_fill(~keep, float("-inf")), -1)

    torch.manual_seed(0)
    x, lengths = torch.randn(16, 40), torch.randint(1, 40, (16,))
    ref = Ref()(x, lengths)
    late = torch.softmax(x.masked_fill(~(torch.arange(40)[None, :] <= lengths[:, None]), float("-inf")), -1)
    got = index_hint(Ref(), [x, lengths], late, ref, (late - ref).abs() > 1e-6)
    assert got is not None and got["data"]["offset"] == 0 and "lengths[row] (input 1)" in got["text"], got
    early = torch.softmax(x.masked_fill(~(torch.arange(40)[None, :] < lengths[:, None] - 1), float("-inf")), -1)
    got = index_hint(Ref(), [x, lengths], early, ref, (early - ref).abs() > 1e-6)
    assert got is not None and got["data"]["offset"] == -1 and "lengths[row] (input 1) - 1" in got["text"], got
    noisy = ref + 1e-3 * torch.randn(16, 40)  # wrong everywhere, largest errors anywhere
    assert index_hint(Ref(), [x, lengths], noisy, ref, torch.ones(16, 40, dtype=torch.bool)) is None
