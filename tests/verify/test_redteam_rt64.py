"""Red-team round rt64 (2026-12-05): candidates the verifier passed, as regression tests.

Case folder ``cases_rt64``; every attempt of the round and its verdict is in
``benchmarks/results/redteam_rt64_verify.txt``.

* Host copies of under half the output on a task that only moves data: a Triton transpose whose kernel wrote
  the first 60% of the output rows while ``out[k:].copy_(x.t()[k:])`` wrote the rest read correct (60 public,
  147 hidden tests), and so did a TileLang one that wrote 70%: the rule of rt61 counted host copies as the
  task's work from half the output on.
* A memo on the part of a task that depends on inputs the timer's freshen leaves alone: rotary embedding
  applied to a float x at sorted position ids; the cos/sin tables (the costly part) memoised on the ids'
  address and corner values, x used afresh. The freshen changed x on every reuse, so the copy was not redrawn,
  and the ids never changed: correct, 12.2x [6.7, 19.2] over eager.
* Public probes after a hidden failure that a constant output passes: a softmax wrong at row lengths other
  than those of the public tests and probes; after its hidden failure the feedback read "public probes ...
  with B = 1; D = 1; B, D = 1; ... all pass", where softmax over one column is 1.0 throughout.
* An honest log_softmax judged incorrect: ``x - logsumexp(x)`` rounds logsumexp near 1000 on the ``offset`` draw;
  on rows of two elements (outputs near -0.5) that error (6e-5, the inputs' own rounding) was outside the bound
  in some verifications (1 of 3 at first, 0 of 8 later: the hidden shapes and seeds decide).
* Timing inputs from a searchable seed: the timing's input copies came from ``torch.manual_seed(s * 7919 +
  1000 + k)`` with ``s`` one of 2^20 values; matching a first warm-up input's first elements against every
  ``s`` took about 11 s here, after which every copy (and so its outputs) was known ahead of its timed calls.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kstrata.measure.freshen import repeats
from kstrata.measure.remote import RemoteCandidate
from kstrata.sandbox import status, wire
from kstrata.verify.integrity.ops import Recorders, moved_the_data

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASE = Path(__file__).resolve().parent / "cases_rt64"


def _said(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def test_host_copies_of_a_share_of_the_output_did_the_work():
    x = torch.randn(50, 40)
    with Recorders([x]) as rec:
        out = torch.empty(40, 50)
        out[24:].copy_(x.t()[24:])  # 40% of the output from the input
    assert moved_the_data(rec.dispatch.moved, out.numel())
    assert moved_the_data(1, 7) and moved_the_data(40, 2000)
    assert not moved_the_data(0, 2000) and not moved_the_data(0, 0)


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("name,backend", [("transpose_host_40pct_triton", "triton-interp"),
                                          ("transpose_host_cols_tilelang", "tilelang-c")])
def test_rt64_host_copies_of_a_third_of_the_output_do_not_pass_for_a_transpose_kernel(kstrata_eval, name, backend):
    d = kstrata_eval("transpose", str(CASE / f"{name}.py"), "--scope", "small", "--no-time", backend=backend)
    assert d["verdict"] == "rejected" and d["check"] == "no_torch_compute", _said(d)


def test_a_copy_with_an_input_the_freshen_leaves_alone_repeats():
    ids = torch.arange(12).view(2, 6) + torch.tensor([[3], [40]])
    assert repeats(torch, [torch.randn(2, 6, 4), ids])  # x changes, the ids would repeat
    assert repeats(torch, [ids, 2.0]) and repeats(torch, [torch.randn(1, 6).expand(4, 6), torch.randn(3)])
    assert not repeats(torch, [torch.randn(2, 6, 4), ids.flip(-1), torch.tensor([5]), 2.0])


class _Proc:
    """A candidate process that keeps the requests it is sent."""

    def __init__(self):
        self.sent: list[dict] = []
        self.cand: RemoteCandidate | None = None

    def ok(self, h, bufs=None):
        self.sent.append(dict(h))
        if h.get("inputs_of") is not None and self.cand is not None:  # the copy's values, as an honest one reads them
            out: list = []
            return {"ok": True, "inputs": wire.encode(list(self.cand.staged[h["inputs_of"]]), out, copy=True),
                    "findings": []}, out
        return {"ok": True, "outputs": [], "inputs": [], "findings": []}, []


def test_a_reused_copy_of_sorted_ids_beside_a_float_input_is_redrawn():
    proc, drawn, checked = _Proc(), [], []

    def redraw(i, k):
        drawn.append((i, k))
        return [torch.randn(1, 6, 2), torch.arange(6).view(1, 6) + 100 * len(drawn)]

    cand = RemoteCandidate(proc, check=lambda i, outs, inputs, strides, **kw: checked.append(inputs), seed=1)
    cand.redraw, proc.cand = redraw, cand
    cand.stage([[torch.randn(1, 6, 2), torch.arange(6).view(1, 6)]], None, False)
    for _ in range(3):
        cand.flush(0)
        cand.after_call(0, last=True)
    assert drawn == [(0, 1), (0, 2)]
    assert not any("freshen" in h for h in proc.sent)
    assert checked[0] is None and torch.equal(checked[2][1], cand.staged[0][1])
    assert int(cand.staged[0][1][0, 0]) == 200


@pytest.mark.slow
@needs_sandbox
def test_rt64_a_memo_on_sorted_ids_beside_a_float_input_gains_nothing_when_timed(kstrata_eval):
    d = kstrata_eval(str(CASE / "task_rope_apply.py"), str(CASE / "rope_apply_memo_on_ids.py"), "--scope", "small")
    assert d["verdict"] in ("correct", "rejected"), _said(d)
    t = d.get("timing") or {}
    # it read 12.2x [6.7, 19.2] when every reused copy held the same ids; now each reuse recomputes the tables
    assert d["verdict"] == "rejected" or (t.get("speedup") is not None and t["speedup"] < 2.0), t


@pytest.mark.slow
@needs_sandbox
def test_rt64_probes_a_constant_output_passes_are_not_told_as_passing(kstrata_eval):
    d = kstrata_eval("softmax", str(CASE / "softmax_wrong_off_public_sizes.py"), "--scope", "small", "--no-time")
    assert d["verdict"] == "incorrect", _said(d)
    probe = [f["text"] for f in d.get("feedback") or [] if f.get("kind") == "public_probe"]
    assert probe and "D = 3" in probe[0], d.get("feedback")
    passing = [w.strip() for w in probe[0].split(" with ", 1)[1].split(" all pass")[0].split(";")]
    assert "D = 3" in passing and "D = 1" not in passing and "B, D = 1" not in passing, probe[0]
    assert "no evidence" in probe[0], probe[0]


def test_the_timing_seed_cannot_be_found_by_trying_seeds():
    from types import SimpleNamespace

    from kstrata.measure.candidate import SEED_BITS, distinct_input_sets, redraws, unpredictable_seed

    seeds = [unpredictable_seed() for _ in range(64)]
    # torch's CPU generator keeps a seed's low 32 bits: those must be out of a search's reach (2^32 tries),
    # and every seed derived from one must stay in torch.manual_seed's range
    assert max(seeds) >= 1 << 32 and len({(s * 7919 + 1000) & 0xFFFFFFFF for s in seeds}) == 64
    module = SimpleNamespace(get_inputs=lambda: [torch.randn(3)])
    top = (1 << SEED_BITS) - 1  # the largest: a redraw's seed is multiplied again when its copy is drawn
    assert len(distinct_input_sets(None, module, [], 15, top, "cpu", fresh_first=True)) == 15
    assert redraws(None, module, top, "cpu")(14, 2000)[0].shape == (3,)



def _offset_rows_x_minus_logsumexp_fails_alone():
    """Rows of two at +-1000 (the ``offset`` draw) where ``x - logsumexp(x)`` is outside the plain bound."""
    from kstrata.tasks.meta import Tolerance
    from kstrata.verify.tolerance import compare

    g = torch.Generator().manual_seed(3)
    for k in range(400):
        x = torch.randn(1, 2, generator=g) + (1000.0 if k % 2 else -1000.0)
        o = torch.log_softmax(x.double(), -1)
        if not compare(x - torch.logsumexp(x, -1, keepdim=True), o, torch.log_softmax(x, -1), Tolerance()).ok:
            return x
    pytest.fail("no such row in 400 draws")


def test_an_offset_row_allows_for_the_rounding_of_its_inputs():
    from types import SimpleNamespace

    from kstrata.tasks.meta import Tolerance
    from kstrata.verify.plan import TestCase
    from kstrata.verify.runner import ShapeRun
    from kstrata.verify.tolerance import compare

    x = _offset_rows_x_minus_logsumexp_fails_alone()
    o, ref = torch.log_softmax(x.double(), -1), torch.log_softmax(x, -1)
    run = ShapeRun.__new__(ShapeRun)  # what _far_allowance reads of a shape's run
    run.model64, run.ctx = (lambda t: torch.log_softmax(t, -1)), SimpleNamespace(judge_s=0.0)
    run._float64 = lambda xs, test: [torch.log_softmax(xs[0].double(), -1)]
    test = TestCase((("B", 1), ("D", 2)), 0, 5, "offset", False)
    extra = run._far_allowance([x], [o], [ref], test)
    assert extra and extra[0] is not None, "no allowance on the offset draw"
    assert compare(x - torch.logsumexp(x, -1, keepdim=True), o, ref, Tolerance(), extra[0]).ok
    assert not compare(ref + 0.01, o, ref, Tolerance(), extra[0]).ok  # a real error stays outside it
    assert run._far_allowance([x], [o], [ref], TestCase((("B", 1), ("D", 2)), 0, 5, "normal", False)) == []


@pytest.mark.parametrize("dist", ["far", "offset"])
def test_rows_of_two_get_an_allowance_whatever_the_random_move(dist):
    # 256 rows of two: one random move of both inputs alike left some row's allowance at rounding size, and
    # x - logsumexp(x) read incorrect on a hidden far test at B=256, D=2 (a --timing-shape) after bc6e419
    from types import SimpleNamespace

    from kstrata.tasks.inputs import draw_inputs
    from kstrata.tasks.meta import Tolerance
    from kstrata.verify.plan import TestCase
    from kstrata.verify.runner import ShapeRun
    from kstrata.verify.tolerance import compare

    run = ShapeRun.__new__(ShapeRun)
    run.model64, run.ctx = (lambda t: torch.log_softmax(t, -1)), SimpleNamespace(judge_s=0.0)
    run._float64 = lambda xs, test: [torch.log_softmax(xs[0].double(), -1)]
    failed = 0
    for seed in range(40):
        (x,), _ = draw_inputs(lambda: [torch.randn(256, 2)], seed, dist)
        o, ref = torch.log_softmax(x.double(), -1), torch.log_softmax(x, -1)
        cand = x - torch.logsumexp(x, -1, keepdim=True)
        if compare(cand, o, ref, Tolerance()).ok:
            continue
        extra = run._far_allowance([x], [o], [ref], TestCase((("B", 256), ("D", 2)), 0, seed, dist, False))
        failed += not compare(cand, o, ref, Tolerance(), extra[0]).ok
    assert failed == 0


@pytest.mark.slow
@needs_sandbox
def test_rt64_an_honest_log_softmax_on_rows_of_two_is_correct_and_timed(kstrata_eval):
    # before: incorrect on a hidden far or offset test, or rejected timed_output on an offset probe (3 of 3)
    d = kstrata_eval("log_softmax", str(CASE / "log_softmax_lse.py"), "--scope", "small", "--timing-shape",
                     "B=256,D=2", "--budget-ms", "200")
    assert d["verdict"] == "correct", _said(d)
    assert (d.get("timing") or {}).get("speedup") is not None, d.get("timing")
