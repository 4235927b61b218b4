"""Queue round rt75 (benchmarks/results/agents_queue_rt75.txt): a tile of rows
that shares one row's value is named (row_groups), and integer outputs that
hold kstrata's allocation poison are told as memory never written, not a race."""

from __future__ import annotations

import pytest
import torch

from kstrata.sandbox import status
from kstrata.verify.feedback import describe_tensor
from kstrata.verify.runner import follows_poison

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")


def _quant(w: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    return torch.round(w / s[:, None]).clamp(-128, 127)


def _draw(n: int = 64, k: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    w = torch.randn(n, k, generator=g) * (0.1 + 2 * torch.rand(n, 1, generator=g))
    return w, 0.8 * w.abs().amax(dim=1) / 127


def _kinds(c: torch.Tensor, o: torch.Tensor) -> dict[str, str]:
    c, o = c.double(), o.double()
    items = describe_tensor(c, o, c != o, {})
    return {i["kind"]: i["text"] for i in items}


def test_a_tile_that_uses_its_first_rows_scale_is_named():
    # rt75 P1.2: a [4, BLOCK_K] tile loading scale[pid * 4] for its 4 rows (quantize_per_channel, N=64, K=128)
    w, s = _draw()
    shared = s.reshape(-1, 4)[:, :1].expand(-1, 4).reshape(-1)
    kinds = _kinds(_quant(w, shared), _quant(w, s))
    text = kinds.get("row_groups", "")
    assert "every group of 4 consecutive rows" in text, kinds
    assert "row 0 of each group (rows 0, 4, 8, 12, ...)" in text and "once per tile of 4 rows" in text, text
    assert "row 1: about x" in text, text  # the wrong rows' codes scaled by s[row]/s[row0]


def test_a_tile_absmax_over_the_whole_tile_is_named_with_varying_rows():
    # rt72 P4.3 (open item): per-token fake quantization whose absmax ran over the whole [4, D] tile
    g = torch.Generator().manual_seed(3)
    x = torch.randn(8, 77, generator=g) * (0.1 + 2 * torch.rand(8, 1, generator=g))
    row = x.abs().amax(dim=1) / 127
    tile = x.abs().reshape(2, -1).amax(dim=1).repeat_interleave(4) / 127
    kinds = _kinds(_quant(x, tile) * tile[:, None], _quant(x, row) * row[:, None])
    text = kinds.get("row_groups", "")
    assert "every group of 4 consecutive rows" in text and "a different one in each group" in text, kinds
    assert "without axis=1" in text


def test_no_row_groups_item_for_other_patterns():
    w, s = _draw()
    want = _quant(w, s)
    tail = want.clone()
    tail[-1] += 1  # only the last row wrong
    assert "row_groups" not in _kinds(tail, want)
    every = want * 2  # every row wrong
    assert "row_groups" not in _kinds(every, want)
    alternate = want.clone()
    alternate[1::2] += 3  # every other row wrong: one right row per pair, a pattern of its own
    assert "every group of 2 consecutive rows" in _kinds(alternate, want).get("row_groups", "")


def test_integer_outputs_that_hold_the_poison_are_unwritten_memory():
    # rt75 P1.4: int8 outputs never written read 127 under pattern 1 and -128 under pattern 2 (torch.empty in
    # the candidate process), 0x55 bytes under TVM's pattern 2; told as a race before
    first = torch.tensor([3, 127, 127], dtype=torch.int8)
    assert follows_poison([first], [torch.tensor([3, -128, -128], dtype=torch.int8)])
    top = torch.tensor([3, 2**31 - 1], dtype=torch.int32)
    assert follows_poison([top], [torch.tensor([3, 0x55555555], dtype=torch.int32)])
    assert not follows_poison([first], [torch.tensor([3, 126, 127], dtype=torch.int8)])  # a race's difference
    assert not follows_poison([torch.tensor([3, -128], dtype=torch.int8)], [torch.tensor([3, 127], dtype=torch.int8)])
    assert not follows_poison([torch.tensor([True])], [torch.tensor([False])])


def test_the_shapes_item_names_a_remainder_where_passing_sizes_are_multiples_of_16():
    # rt75 P2.3: a chunk loop of d // 16 chunks passed at D=512 and failed at D=77 (every element wrong)
    from kstrata.verify.feedback import _remainder_note

    note = _remainder_note([{"B": 8, "D": 512}], [{"B": 5, "D": 77}])
    assert "D=77 leaves a remainder (1 x 64 + 13 = 4 x 16 + 13; and less than one block of 128 or more) where " \
           "every passing D (512) is a multiple of 16" in note and "B=" not in note, note  # nc28: BLOCK=256 too
    assert "K=5 is less than one block of 16" in _remainder_note([{"N": 64, "K": 128}], [{"N": 77, "K": 5}])
    assert _remainder_note([{"B": 8, "D": 512}], [{"B": 5, "D": 512}]) == ""  # D is no cause there
    assert _remainder_note([{"D": 77}], [{"D": 13}]) == ""  # passing sizes leave remainders too


CASE = "rt75_quant_tile_feedback"


@needs_sandbox
def test_quant_kernels_from_the_round_get_the_items(kstrata_eval):
    """The round's two answers, verified as the run did (triton-interp, small scope)."""
    d = kstrata_eval("quantize_per_channel", f"{CASE}/quant_first_row_scale.py", "--scope", "small", "--no-time",
                     backend="triton-interp")
    kinds = {i["kind"]: i["text"] for i in d["feedback"]}
    assert d["verdict"] == "incorrect" and "row 0 of each group" in kinds.get("row_groups", ""), d["feedback"]
    d = kstrata_eval("quantize_per_channel", f"{CASE}/quant_tail_chunks_dropped.py", "--scope", "small",
                     "--no-time", backend="triton-interp")
    kinds = {i["kind"]: i["text"] for i in d["feedback"]}
    assert d["verdict"] == "incorrect" and "unwritten_memory" in kinds and "race" not in kinds, d["feedback"]
    assert "K=5 is less than one block of 16" in kinds.get("shapes", ""), kinds


def test_an_output_zeroed_with_signed_zeros_reads_0_and_names_an_overflowed_sum():
    # rt75 P3.2: rmsnorm_fp16 summing x*x in float16 on the `large` draw: rstd = 1/sqrt(inf) = 0, so every wrong
    # element was -0.0 or 0.0, and the values item said "every wrong element is -0"
    from kstrata.verify.feedback import values_item

    want = torch.tensor([[-1.32288, -0.648807, 0.62, 1.5]], dtype=torch.float64)
    got = want * 0.0  # -0.0 where want < 0
    text = values_item(got, want, torch.ones_like(got, dtype=torch.bool))["text"]
    assert "every wrong element is 0: the result zeroed" in text and "is -0" not in text, text
    assert "overflowed a narrow accumulator" in text


def test_the_same_right_row_in_two_groups_is_not_called_the_first_row():
    # rt72's candidate ece615f4 (a tile-wide absmax on fake_quant_per_token, B=8): rows 1 and 5 right, the rows
    # holding each tile's maximum; "loaded at the tile's first row" would be wrong there
    from kstrata.verify.row_groups import row_groups_item

    want = torch.arange(1.0, 33.0, dtype=torch.float64).reshape(8, 4)
    got = want.clone()
    got[[0, 2, 3, 4, 6, 7]] += 0.5
    text = row_groups_item(got, want, got != want)["text"]
    assert "row 1 of each group (rows 1, 5)" in text and "without axis=1" in text and "first row" not in text, text
