"""Newcomer round nc21 (2026-12-05): feedback on two triton-interp kernels for a gated sum.

Case folder ``cases_nc21`` (``out[b, l] = sum_c x * sigmoid(g) * w[c]``, a weight of size C):

- ``gated_sum_tail.py`` launches floor(L/32) programs along L: the last partial tile is never
  written (0). Its feedback said "a parameter of that size (33) differs from the Model's" (no
  parameter has size 33; every wrong element is 0) and "passes far": the ``far`` draw moves g to
  -1e4 and beyond, sigmoid gives exactly 0, the reference output is all zeros and any all-zero
  output passes that draw's tests (:func:`kstrata.verify.feedback.blind`).
- ``gated_sum_oob.py`` loads x without its mask (line 22, one of three loads): the out-of-bounds message
  named no line (fixed since, 285ae05) nor which pointer argument the stray lanes overrun; it now names
  both, with the stray lanes' element offsets into that tensor.
"""

from __future__ import annotations

from pathlib import Path

import torch

from kstrata.verify.feedback import blind, parameter_hint
from kstrata.tasks.meta import Tolerance

CASE = Path(__file__).resolve().parent / "cases_nc21"


class _Scaled(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(d))


def test_nc21_no_parameter_hint_for_an_unwritten_tail():
    torch.manual_seed(0)
    o = torch.randn(3, 33, dtype=torch.float64)
    c = o.clone()
    c[:, 32] = 0  # the last partial tile never written
    assert parameter_hint(_Scaled(7), c, o) is None  # no parameter of size 33
    assert parameter_hint(_Scaled(33), c, o) is None  # one of that size, but the evidence is a zeroed column
    c = o.clone()
    c[:, 30:] *= 2  # a few columns off: not another draw of a parameter
    assert parameter_hint(_Scaled(33), c, o) is None
    c = o.clone()
    c[:, 32] = 0
    assert parameter_hint(_Scaled(33), c - 0.5, o) is None  # an offset with a zeroed column
    # a parameter drawn differently still gets the hint
    model = _Scaled(33)
    assert parameter_hint(model, o / model.weight.detach().double(), o)["kind"] == "parameters"


def test_nc21_blind_names_a_draw_whose_reference_output_is_zero_or_constant():
    tol = Tolerance()
    r = torch.randn(4, 9)
    assert blind([r.double()], [r], tol) is None
    z = torch.zeros(4, 9)
    assert blind([z.double()], [z], tol) == "zero"
    k = torch.full((4, 9), 3.25)
    assert blind([k.double()], [k], tol) == "constant"


def test_nc21_tail_feedback_has_no_parameter_hint_and_no_pass_on_the_zero_draw(kstrata_eval):
    d = kstrata_eval(str(CASE / "gated_sum_task.py"), str(CASE / "gated_sum_tail.py"), "--no-time", "--scope",
                     "small", backend="triton-interp")
    assert d["verdict"] == "incorrect", d.get("message")
    kinds = {f["kind"]: f for f in d["feedback"]}
    assert "tail_tile" in kinds and "parameters" not in kinds, kinds.get("parameters")
    dist = kinds.get("distributions")
    assert dist is None or "far" not in dist["data"]["passing"], dist
    assert dist is None or dist["data"]["blind"] == {"far": "zero"}, dist


def test_nc21_an_out_of_bounds_triton_load_names_the_pointer_argument_it_overruns():
    """Finding 5 (``gated_sum_oob.py``, the x load unmasked at line 22 of three loads): the message named
    the kernel and the program but not which argument the stray lanes belong to."""
    import numpy as np
    import pytest
    from types import SimpleNamespace

    from kstrata.backends.triton.fidelity import OutOfBounds, _Launch

    x, w = torch.zeros(2, 3, 8), torch.zeros(5)
    launch = _Launch("k")
    launch.add_tensors([x, w, 8], ["x_ptr", "w_ptr", "L"])
    addr = x.data_ptr() + 4 * np.arange(40, 56, dtype=np.uint64)  # elements 40-55 of 48: the last 8 stray
    with pytest.raises(OutOfBounds) as e:
        launch.bounds(SimpleNamespace(data=addr), SimpleNamespace(data=np.ones(16, dtype=bool)), "load")
    text = str(e.value)
    assert "8 of its 16 lane(s) (every lane is on" in text, text
    assert "into `x_ptr` (a float32 tensor of shape (2, 3, 8), 48 elements)" in text, text
    assert "its elements 48 to 55" in text, text
    mask = np.arange(16) % 2 == 0  # half the lanes on: only those count
    with pytest.raises(OutOfBounds) as e:
        launch.bounds(SimpleNamespace(data=addr), SimpleNamespace(data=mask), "store")
    assert "4 of its 8 lane(s) (lanes whose mask is true)" in str(e.value) and "elements 48 to 54" in str(e.value)


def test_nc21_out_of_bounds_feedback_names_line_and_argument(kstrata_eval):
    d = kstrata_eval(str(CASE / "gated_sum_task.py"), str(CASE / "gated_sum_oob.py"), "--no-time", "--scope",
                     "small", backend="triton-interp")
    assert d["verdict"] == "runtime_error", d.get("message")
    message = d["evidence"]["message"]
    assert "at line 22 (`x = tl.load(x_ptr + idx)`)" in message, message
    assert "into `x_ptr` (a float32 tensor of shape (2, 16, 64), 2048 elements)" in message, message
    # the traceback ends with the candidate's own frames (it held only Triton's and kstrata's)
    trace = d["evidence"]["traceback"]
    own = trace[trace.index("The candidate's own frames (innermost last):"):]
    assert 'File "<candidate>", line 38, in forward' in own and 'File "<candidate>", line 22, in gated_sum_kernel' \
        in own and "x = tl.load(x_ptr + idx)" in own, trace[-2000:]
    assert own.index("line 38, in forward") < own.index("line 22, in gated_sum_kernel")
    assert "kstrata-cand-" not in trace


def test_nc21_tests_an_all_zero_output_passes_are_not_counted_as_evidence(kstrata_eval):
    """Finding 4, the verdict's side: a correct kernel's tests on the ``far`` draw (reference output
    exactly 0) are still run (a kernel failing them fails) but not counted among the tests it passed."""
    from kstrata.tasks.loader import load_task
    from kstrata.verify.plan import public_tests

    task = load_task(CASE / "gated_sum_task.py")
    d = kstrata_eval(str(CASE / "gated_sum_task.py"), str(CASE / "gated_sum_einsum.py"), "--no-time", "--scope",
                     "small")
    assert d["verdict"] == "correct", d.get("evidence")
    blind_tests = d["evidence"]["blind_tests"]
    far = sum(t.dist == "far" for t in public_tests(task))
    assert 0 < blind_tests["public"] <= far, blind_tests  # far's even seeds: g moved to -1e4 and beyond
    assert d["public_tests"] + blind_tests["public"] == len(public_tests(task))
    assert "not counted" in d["evidence"]["message"]


def test_nc21_a_shape_whose_reference_output_is_zero_is_not_told_as_passing(kstrata_eval):
    """The shapes item said "passes at B=2 ... fails at B=3: a boundary / shape-specific bug" for an
    all-zero output, whose pass at B=2 (reference output all zero there) tells nothing of shapes."""
    d = kstrata_eval(str(CASE / "gated_by_batch_task.py"), str(CASE / "gated_by_batch_zeros.py"), "--no-time",
                     "--scope", "small")
    assert d["verdict"] == "incorrect", d.get("evidence")
    kinds = {f["kind"]: f for f in d["feedback"]}
    assert "shapes" not in kinds, kinds["shapes"]
    assert "wrong_share" in kinds  # the failure itself is still located


def test_nc23_a_test_whose_output_is_one_number_is_not_blind():
    """newcomer nc23: a row dot at B=1 (the output one number) had 103 passing tests told as ones "an
    all-zero or constant output passes too ... e.g. a draw that saturates a sigmoid", and the hidden-failure
    probe at B = 1 said "any such output passes them": one number is one value throughout by itself, so the
    oracle's mean is the answer, not a fake. A zero answer, and a constant over many elements, still are."""
    tol = Tolerance()
    one = torch.tensor([-12.375])
    assert blind([one.double()], [one], tol) is None
    zero = torch.zeros(1)
    assert blind([zero.double()], [zero], tol) == "zero"
    many = torch.full((5,), -12.375)
    assert blind([many.double()], [many], tol) == "constant"
    assert blind([one.double(), many.double()], [one, many], tol) == "constant"
