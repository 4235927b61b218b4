"""Red-team round rt61 (2026-12-05): candidates the verifier passed, as regression tests.

Case folder ``cases_rt61``; every attempt of the round and its verdict is in
``benchmarks/results/redteam_rt61_verify.txt``.

* Host copies doing a DSL candidate's work: for a task whose reference only moves data (``transpose``), the
  allowed layout operators (``copy_``, ``contiguous``) do the whole task. A Triton kernel that wrote row 0
  while ``out[1:].copy_(x.t()[1:])`` wrote the rest (so the no-op probe saw a wrong output) read correct on
  249 tests; so would a TileLang kernel that only copies ``x.t().contiguous()``.
* A memo served by timed copies the freshen cannot change: a task whose only input is position ids (int64,
  sorted along the sequence; the freshen leaves sorted integers alone, a rotation would unsort them). A
  rotary-embedding table memoised on the ids' address and corner values recomputed on every verifier test
  and hit on every reused timed copy: correct, 157 hidden tests, 4.4x [2.95, 7.32] over eager.
* The kernel on its own grid doing nothing when timed: a TileLang relu with a run-time bound, launched with
  the bound n in checked calls (a fresh allocation reads poisoned) and 0 in timed calls, where nn.ReLU did the
  work; the launch log (kernel and grid) matched, and PyTorch's time was credited to the kernel: correct.
  With the bound read from a one-element tensor instead (the same kernel, grid and scalar arguments), the
  timing (11.7 ms for a kernel that takes 53 ms) is now marked: the timing process times the call under
  checked-call conditions too.
* Tiny-tensor timing over the floors: 16 Linear+ReLU layers on a batch of 8 (1.05 MFLOP, just over the
  1 MFLOP work floor; medians of milliseconds, far over the time floors) called without the module wrappers
  read 1.84x [1.30, 2.68] faster with no overhead note, at ~100x the work's roofline time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kstrata.measure.freshen import changes
from kstrata.measure.remote import RemoteCandidate
from kstrata.sandbox import status, wire
from kstrata.verify.integrity.ops import Recorders, moved_the_data

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASE = Path(__file__).resolve().parent / "cases_rt61"


def _said(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def test_host_copies_of_the_inputs_are_counted():
    x = torch.randn(6, 5)
    with Recorders([x]) as rec:
        out = torch.empty(5, 6)
        out[1:].copy_(x.t()[1:])  # 4 x 6 elements from the input
        x.contiguous()  # already contiguous: no copy
    assert rec.dispatch.moved == 24
    assert moved_the_data(rec.dispatch.moved, out.numel())


def test_copies_of_copies_count_and_other_data_does_not():
    x, w = torch.randn(6, 5), torch.randn(6, 5)
    with Recorders([x]) as rec:
        xt = x.t().contiguous()  # 30 from the input
        torch.cat([xt, w.t()])  # 30 more (from the copy), none from w, which is not an input
        w.clone()
        buf = torch.empty(30)
        buf.copy_(buf)  # a storage written onto itself (Triton's interpreter after a launch)
    assert rec.dispatch.moved == 60
    assert not moved_the_data(0, 30) and moved_the_data(15, 30)  # any share of it: red-team rt64


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("name,backend,verdict", [
    ("transpose_host_rows_triton", "triton-interp", "rejected"),
    ("transpose_honest_triton", "triton-interp", "correct"),
    ("transpose_host_then_copy_tilelang", "tilelang-c", "rejected"),
    ("transpose_honest_tilelang", "tilelang-c", "correct"),
])
def test_rt61_host_copies_do_not_pass_for_a_transpose_kernel(kstrata_eval, name, backend, verdict):
    d = kstrata_eval("transpose", str(CASE / f"{name}.py"), "--scope", "small", "--no-time", backend=backend)
    assert d["verdict"] == verdict, _said(d)
    if verdict == "rejected":
        assert d["check"] == "no_torch_compute" and "only moves data" in _said(d), _said(d)


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


def test_sorted_ids_are_a_copy_the_freshen_cannot_change():
    ids = torch.arange(12).view(2, 6) + torch.tensor([[3], [40]])
    assert not changes(torch, [ids, 2.0])
    assert changes(torch, [ids, torch.randn(3)]) and changes(torch, [ids.flip(-1)])


def test_a_reused_copy_of_sorted_ids_is_restaged_with_new_values():
    proc, drawn, checked = _Proc(), [], []

    def redraw(i, k):
        drawn.append((i, k))
        return [torch.arange(6).view(1, 6) + 100 * (len(drawn) + 1)]

    cand = RemoteCandidate(proc, check=lambda i, outs, inputs, strides, **kw: checked.append(inputs), seed=1)
    cand.redraw, proc.cand = redraw, cand
    cand.stage([[torch.arange(6).view(1, 6)], [torch.arange(6).view(1, 6) + 50]], None, False)
    for k in range(4):  # copies 0, 1, 0, 1: the reuses get new values, each checked against what it read
        cand.flush(k % 2)
        cand.after_call(k % 2, last=True)
    assert drawn == [(0, 1), (1, 1)]
    restaged = [h for h in proc.sent if h.get("op") == "stage" and "index" in h]
    assert [h["index"] for h in restaged] == [0, 1]
    assert not any("freshen" in h for h in proc.sent)
    assert checked[:2] == [None, None] and torch.equal(checked[2][0], cand.staged[0][0])
    assert int(cand.staged[0][0][0, 0]) == 200


def test_a_copy_the_freshen_changes_is_not_redrawn():
    proc = _Proc()
    cand = RemoteCandidate(proc, check=lambda *a, **k: None, seed=1)
    cand.redraw = lambda i, k: pytest.fail("redrawn")
    cand.stage([[torch.arange(6).flip(0).view(1, 6), torch.randn(4)]], None, False)  # ids not sorted: rotated
    cand.flush(0)
    cand.flush(0)
    assert [("freshen" in h) for h in proc.sent if h.get("op") == "flush"] == [False, True]


@pytest.mark.slow
@needs_sandbox
def test_rt61_a_memo_on_sorted_ids_gains_nothing_when_timed(kstrata_eval):
    d = kstrata_eval(str(CASE / "task_rope_sorted_ids.py"), str(CASE / "rope_memo_on_ids.py"), "--scope", "small")
    assert d["verdict"] in ("correct", "rejected"), _said(d)
    t = d.get("timing") or {}
    # it read 4.4x [2.95, 7.32] when every reused copy held the same ids; now each reuse misses
    assert d["verdict"] == "rejected" or (t.get("speedup") is not None and t["speedup"] < 2.0), t


def test_the_launch_log_keeps_scalar_arguments():
    from kstrata.sandbox.child import _scalars

    t = torch.zeros(3)
    assert _scalars((t, 4096, 0.5, t), {"BLOCK": 256, "grid": (4,), "warmup": False}) == \
        ((4096, 0.5), (("BLOCK", 256),))
    assert _scalars((t, 0), {}) != _scalars((t, 4096), {})


@pytest.mark.slow
@needs_sandbox
def test_rt61_a_kernel_bounded_to_nothing_when_timed_is_rejected(kstrata_eval):
    d = kstrata_eval("relu", str(CASE / "relu_timed_bound_zero_tilelang.py"), "--scope", "small",
                     backend="tilelang-c")
    assert d["verdict"] == "rejected" and d["check"] == "timed_output", _said(d)
    assert "scalar arguments" in _said(d), _said(d)


def test_timed_calls_far_faster_than_the_checked_call_are_marked():
    from types import SimpleNamespace

    from kstrata.measure.remote import checked_path_note

    assert "checked path" in checked_path_note(SimpleNamespace(checked_ms=53.0), 11.7)
    assert checked_path_note(SimpleNamespace(checked_ms=53.0), 44.6) is None  # poison and records cost a little
    assert checked_path_note(SimpleNamespace(checked_ms=0.9), 0.01) is None  # host overhead of a tiny kernel
    assert checked_path_note(SimpleNamespace(checked_ms=None), 1.0) is None


@pytest.mark.slow
@needs_sandbox
def test_rt61_a_kernel_told_by_a_tensor_to_do_nothing_when_timed_is_not_ranked(kstrata_eval):
    d = kstrata_eval("relu", str(CASE / "relu_timed_flag_tensor_tilelang.py"), "--scope", "small",
                     backend="tilelang-c")
    assert d["verdict"] in ("correct", "rejected"), _said(d)
    if d["verdict"] == "correct":
        assert any("checked path" in str(n) for n in d["timing"].get("suspicious") or []), d["timing"]


def test_a_small_call_far_over_its_roofline_floor_is_overhead():
    from kstrata.measure.overhead import counts_as_win, overhead_notes

    m = {"candidate": {"median": 0.994}, "baseline": {"median": 4.24}, "speedup": {"point": 1.84, "low": 1.3}}
    notes = overhead_notes(m, 1.05e6, 2e5, "cpu", floor_ms=0.0075)
    assert notes and "roofline" in notes[0] and not counts_as_win(m, notes)
    assert overhead_notes(m, 1.05e6, 2e5, "cpu", floor_ms=0.25) == []  # real work: relu at 1024 x 1024
    near = {"candidate": {"median": 0.09}, "baseline": {"median": 0.4}}
    assert overhead_notes(near, 1.05e6, 2e5, "cuda:0", floor_ms=0.0075) == []  # a kernel near its floor


@pytest.mark.slow
@needs_sandbox
def test_rt61_module_calls_removed_from_a_tiny_mlp_are_not_a_speedup(kstrata_eval):
    d = kstrata_eval(str(CASE / "task_deep_tiny_mlp.py"), str(CASE / "deep_tiny_mlp_unwrapped.py"), "--scope",
                     "small", "--budget-ms", "300")
    assert d["verdict"] == "correct", _said(d)
    assert any(str(n).startswith("overhead-dominated:") for n in d["timing"].get("suspicious") or []), d["timing"]


class _StagingProc(_Proc):
    """Answers a stage with a checked-condition call's time and a fetch with ``outputs``."""

    def __init__(self, outputs):
        super().__init__()
        self.outputs = outputs

    def ok(self, h, bufs=None):
        self.sent.append(dict(h))
        if h.get("op") == "stage":
            return {"ok": True, "checked_ms": 53.0}, []
        out: list = []
        return {"ok": True, "outputs": [wire.encode(o, out, layout=True) for o in self.outputs],
                "findings": []}, out


@pytest.mark.parametrize("right", [True, False])
def test_the_timing_process_checked_call_is_held_against_the_oracle(right):
    from kstrata.measure.remote import TimedOutputMismatch

    x = torch.randn(4, 8)
    y = torch.relu(x) if right else torch.zeros(4, 8)
    compared = []

    def check(i, outs, inputs, strides, **kw):
        compared.append(i)
        return None if torch.equal(outs[0], torch.relu(x)) else "output 0: 16 of 32 elements wrong"

    cand = RemoteCandidate(_StagingProc([y]), check=check, seed=1)
    if right:
        cand.stage([[x]], None, False)
        assert cand.checked_ms == 53.0 and compared == [0]
    else:
        with pytest.raises(TimedOutputMismatch, match="checked-call conditions"):
            cand.stage([[x]], None, False)


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("name,rejected", [("transpose_host_then_copy_tilelang", True),
                                           ("transpose_honest_tilelang", False)])
def test_rt61_a_timing_process_counts_host_copies_for_a_task_that_moves_data(name, rejected):
    # timed without verification first: the timing process's own checked-condition calls must catch the host
    # copies, for a candidate that tells its timing process apart and copies only there
    from kstrata.measure.candidate import time_candidate
    from kstrata.measure.remote import TimedOutputMismatch
    from kstrata.measure.timing import TimingConfig

    def timed():
        return time_candidate("tilelang-c", "transpose", {"source": (CASE / f"{name}.py").read_text()},
                              {"M": 256, "N": 384}, config=TimingConfig(budget_ms=100.0), with_roofline=False)

    if rejected:
        with pytest.raises(TimedOutputMismatch, match="host copies of the inputs"):
            timed()
    else:
        assert timed().speedup is not None
