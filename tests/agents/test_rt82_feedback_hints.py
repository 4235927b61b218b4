"""Queue round rt82: feedback items the model lacked to act on a failure.

- a constant output ratio that is a ratio of the test's sizes (rt78's open item: 1.01929 = sqrt(80/77), an RMSNorm
  dividing by D rounded up to 16) is named as such;
- a failure on the ``offset``/``far`` draw says which way the wrong rows were moved (rt78's open item: a cross-entropy
  padded with 0.0 was wrong on the rows moved -1000, and nothing said so);
- an output that is the reference's with two same-shaped parameters exchanged (a SwiGLU stacking [W3; W1]) is named.

The verifier runs of the same candidates are in tests/verify/test_rt82_verify_feedback_hints.py.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from kstrata.tasks.inputs import apply_distribution
from kstrata.verify.draw_direction import direction_item
from kstrata.verify.feedback import describe_tensor
from kstrata.verify.size_ratio import size_ratio_hint
from kstrata.verify.swap_hint import swapped_operands_hint


def _rms(x: torch.Tensor, w: torch.Tensor, count: int) -> torch.Tensor:
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) / count + 1e-6) * w


def _constant_ratio(items: list[dict]) -> str:
    return next(i["text"] for i in items if i["kind"] == "constant_ratio")


def _rms_ratio_text(count: int) -> str:
    """The constant_ratio item of an RMSNorm at B=5, D=77 whose mean of squares divides by ``count``."""
    torch.manual_seed(0)
    x, w = torch.randn(5, 77), 1 + 0.1 * torch.randn(77)
    want, got = _rms(x.double(), w.double(), 77), _rms(x, w, count).double()
    return _constant_ratio(describe_tensor(got, want, (got - want).abs() > 1e-4, {"max_err": 0.1}, [x, w]))


def test_rmsnorm_over_a_padded_count_names_the_size_ratio():
    text = _rms_ratio_text(80)
    assert "1.01929" in text and "r^2 = 80/77" in text, text
    assert "77 rounded up to a multiple of 16" in text and "square root" in text, text


def test_a_mean_over_a_padded_count_and_a_whole_factor():
    # y = x * 77 / 80 (a mean dividing by the padded count): the ratio itself, no square root
    assert "r = 77/80" in size_ratio_hint(77 / 80, [5, 77]) and "square root" not in size_ratio_hint(77 / 80, [77])
    assert size_ratio_hint(1.0123, [5, 77]) == ""  # no size ratio: nothing said
    # a whole factor keeps the r^2 hint (a missing 1/sqrt(64)), though 8 = 32 / 4 is a ratio of counts too
    o = torch.randn(4, 77, dtype=torch.float64)
    text = _constant_ratio(describe_tensor(o * 8, o, torch.ones_like(o, dtype=torch.bool), {}, [o]))
    assert "1/sqrt(64)" in text and "rounded" not in text, text


def test_offset_failure_says_the_wrong_rows_were_moved_down():
    torch.manual_seed(0)
    (z,) = apply_distribution([torch.randn(4, 37)], "offset", 0, None)
    labels = torch.zeros(4, dtype=torch.long)
    bad = z.mean(1) < 0  # a max started at 0.0: the rows moved -1000 give -inf
    it = direction_item("offset", [z, labels], bad)
    assert it is not None and it["data"]["wrong_down"] == 2 and it["data"]["wrong_up"] == 0, it
    assert "moved down" in it["text"] and "rows 1, 3" in it["text"] and "about -1000" in it["text"], it["text"]
    assert "moved up are right" in it["text"], it["text"]
    assert direction_item("normal", [z, labels], bad) is None


def test_far_failure_says_which_way_this_seed_moved_every_row():
    torch.manual_seed(0)
    (z,) = apply_distribution([torch.randn(4, 37)], "far", 2, None)  # even seed: every row moved down
    it = direction_item("far", [z], torch.ones(4, 37, dtype=torch.bool))
    assert it is not None and "moved down" in it["text"] and "other seeds move them up" in it["text"], it["text"]
    # both ways wrong: the size, not the sign
    (z,) = apply_distribution([torch.randn(4, 37)], "offset", 0, None)
    it = direction_item("offset", [z], torch.ones(4, 37, dtype=torch.bool))
    assert it is not None and "either way" in it["text"], it


class _SwiGLU(nn.Module):
    def __init__(self, d: int, h: int):
        super().__init__()
        self.w1 = nn.Linear(d, h, bias=False)
        self.w3 = nn.Linear(d, h, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.w1(x)) * self.w3(x)


def test_swapped_weights_are_named_and_other_errors_are_not():
    torch.manual_seed(0)
    m, x = _SwiGLU(8, 6), torch.randn(3, 8)
    swapped = F.silu(x @ m.w3.weight.t()) * (x @ m.w1.weight.t())
    it = swapped_operands_hint(m, [x], [swapped])
    assert it is not None and "`w1.weight` and `w3.weight`" in it["text"] and "exchanged" in it["text"], it
    assert swapped_operands_hint(m, [x], [m(x) * 1.01]) is None
    assert m.w1.weight.data_ptr() != m.w3.weight.data_ptr() and torch.equal(m(x), m(x))  # the Model is untouched


def test_swapped_inputs_are_named():
    class Sub(nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return a - 2 * b

    a, b = torch.randn(4, 5), torch.randn(4, 5)
    it = swapped_operands_hint(Sub(), [a, b], [b - 2 * a])
    assert it is not None and "inputs 0 and 1" in it["text"], it


def test_an_uncorrelated_quant_output_is_told_another_computation_not_fewer_bits():
    torch.manual_seed(0)
    o = torch.randn(1, 64, dtype=torch.float64)
    c = torch.randn(1, 64, dtype=torch.float64)  # e.g. a w4a16 GEMV with each byte's nibbles swapped
    cos = float(F.cosine_similarity(o.flatten(), c.flatten(), dim=0))
    items = describe_tensor(c, o, torch.ones_like(o, dtype=torch.bool), {"cosine": cos, "max_err": 1.0})
    said = next(i["text"] for i in items if i["kind"] == "unrelated_output")
    assert f"{cos:.3g}" in said and "not the same one on fewer bits" in said, said
    near = o * (1 + 1e-3 * torch.randn_like(o))  # a precision shortcut: cosine ~1, no such item
    items = describe_tensor(near, o, torch.ones_like(o, dtype=torch.bool), {"cosine": 0.9999, "max_err": 1e-3})
    assert not [i for i in items if i["kind"] == "unrelated_output"]


def test_a_row_count_used_for_the_row_length_is_named_as_a_ratio_of_two_sizes():
    text = _rms_ratio_text(5)  # rt82's tvm-llvm source answer: the mean divided by the row count (s77), not D
    assert "r^2 = 5/77" in text and "5 and 77 are both sizes of this test" in text, text
    # the same answer at B=8, D=512: r = 1/8 is the ratio of two sizes under the root, not a count of 8 rounded to 64
    text = size_ratio_hint(0.125, [8, 512])
    assert "r^2 = 8/512" in text and "multiple of 64" not in text, text
    assert size_ratio_hint(8.0, [4, 77]) == ""  # a whole factor with no such sizes: the r^2 = 64 hint's case
