"""Overhead-dominated timings are marked and do not count as wins (issue #17
item 7; case 05_tiny_tensor_timing)."""

from __future__ import annotations

from pathlib import Path

import torch

from kstrata.bench import metrics as M
from kstrata.measure.overhead import PREFIX, counts_as_win, empty_call_ms, overhead_notes
from kstrata.measure.timing import TimingConfig, measure
from kstrata.tasks.base import import_module_from_path
from kstrata.tasks.loader import load_task

CASE = Path(__file__).resolve().parents[1] / "verify" / "cases" / "05_tiny_tensor_timing"


def test_case05_tiny_call_is_overhead_dominated_and_not_a_win():
    task = load_task(CASE / "task.py")
    model, inputs, _, _ = task.instantiate(None, 0)
    cand = import_module_from_path(CASE / "candidate.py").ModelNew()
    with torch.no_grad():
        m = measure(cand, inputs, model, TimingConfig(warmup_ms=5, budget_ms=60, flush=False))
    x = inputs[0]
    flops, nbytes = 4.0 * x.numel(), 2.0 * x.numel() * x.element_size()  # ~200 FLOP, 512 B
    notes = overhead_notes(m, flops, nbytes, "cpu", empty_call_ms("cpu"))
    assert notes and all(n.startswith(PREFIX) for n in notes)
    assert any("per-call overhead" in n for n in notes)
    assert not counts_as_win(m, notes)
    m.suspicious += notes
    assert not counts_as_win(m)  # the stored notes are found again
    assert M.excluded_reason({}, m) == "overhead-dominated timing"
    assert M.excluded_reason({}, m.to_dict()) == "overhead-dominated timing"


def test_real_work_is_not_marked_and_interval_decides():
    big = {"candidate": {"median": 5.0}, "baseline": {"median": 10.0},
           "speedup": {"point": 2.0, "low": 1.8, "high": 2.2}, "suspicious": []}
    assert overhead_notes(big, 1e9, 1e8, "cpu", empty_ms=0.003) == []
    assert counts_as_win(big)
    tie = dict(big, speedup={"point": 1.03, "low": 0.98, "high": 1.08})
    assert not counts_as_win(tie)
    # a GPU call at 6 us vs 9 us: under the GPU floor
    tiny = {"candidate": {"median": 0.006}, "baseline": {"median": 0.009}, "speedup": None}
    assert any("GPU" in n for n in overhead_notes(tiny, None, None, "cuda:0"))
    # both medians next to an empty call: the difference is call overhead only
    near = {"candidate": {"median": 0.021}, "baseline": {"median": 0.024}}
    notes = overhead_notes(near, None, None, "cpu", empty_ms=0.020)
    assert len(notes) == 1 and "empty module call" in notes[0]
    assert M.excluded_reason({"weak_match": "zeros"}) == "weak_match: zeros"
    assert M.excluded_reason({"message": "ok"}, big) is None
