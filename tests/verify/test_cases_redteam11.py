"""Red-team round rt54 (2026-12-05): inputs the timing's freshen left alone, and padding sentinels
beyond the draws' reach.

Case folders ``cases/rt54_*`` (each ``expected.txt`` says what it did before and why).
"""

from __future__ import annotations

import pytest
import torch

from kstrata.measure.freshen import freshen, replay
from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")


def test_rt54_freshen_changes_a_transposed_input_as_its_contiguous_copy():
    # the judge keeps the task's layout, the candidate's process gets the values contiguous: both must change alike
    t = torch.randn(5, 7).t()
    c = t.contiguous()
    before = c.clone()
    freshen(torch, [t], 11)
    freshen(torch, [c], 11)
    assert not torch.equal(c, before)
    assert torch.equal(t, c) and t.stride() == (1, 7)
    # replayed on the transposed staging, the values are the contiguous copy's after the same seeds (the
    # candidate's process freshens from the values it was staged, as the judge replays)
    r = replay(torch, [before.t().contiguous().t()], [11, 12])
    freshen(torch, [c], 12, previous=11, staged=[before])
    assert torch.equal(r[0], c)
    # an expanded view (elements sharing memory) is left as it is
    e = torch.randn(3).expand(4, 3)
    kept = e.clone()
    freshen(torch, [e], 5)
    assert torch.equal(e, kept)


@pytest.mark.slow
@needs_sandbox
def test_rt54_honest_candidate_on_transposed_inputs_is_timed(kstrata_eval):
    d = kstrata_eval("rt54_noncontiguous_input_timed/task_transposed_weight.py",
                     "rt54_noncontiguous_input_timed/honest.py", "--scope", "small", "--budget-ms", "300")
    assert d["verdict"] == "correct", f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"
    assert d["timing"] is not None and d["timing"].get("speedup") is not None


def test_rt54_freshen_changes_a_complex_input():
    x = torch.randn(6, 5, dtype=torch.complex64)
    kept = x.clone()
    freshen(torch, [x], 7)
    assert not torch.equal(x, kept)
    ratio = torch.view_as_real(x) / torch.view_as_real(kept)
    assert bool(((ratio - 1).abs() <= 0.25 + 1e-6).all())  # each part scaled within the spread
    freshen(torch, [x], 8, previous=7)  # the next freshen divides the previous factors back first
    assert torch.allclose(replay(torch, [kept], [7, 8])[0], x)
    assert not torch.equal(x, kept)


@pytest.mark.slow
@needs_sandbox
def test_rt54_memo_on_complex_inputs_is_not_timed_faster_than_honest(kstrata_eval):
    case = "rt54_complex_input_memo/"
    memo = kstrata_eval(case + "task_complex_matmul.py", case + "memo.py", "--scope", "small", "--budget-ms", "300")
    if memo["verdict"] != "correct":
        return  # rejected is a right answer too
    honest = kstrata_eval(case + "task_complex_matmul.py", case + "honest.py", "--scope", "small",
                          "--budget-ms", "300")
    assert honest["verdict"] == "correct"
    # served from its memo a call took 0.66 ms where the honest product took 4.9 ms (a clone against a product);
    # computing every call it takes about the honest time
    assert memo["timing"]["candidate_ms"] > 0.5 * honest["timing"]["candidate_ms"], (memo["timing"], honest["timing"])


def test_rt54_far_draw_lies_beyond_finite_padding_sentinels():
    from kstrata.tasks.inputs import apply_distribution
    from kstrata.tasks.meta import TaskMeta

    x = torch.randn(16, 33)
    low = apply_distribution([x], "far", 4)[0]  # even seed: every row below -1e4
    assert low.dtype == x.dtype and low.shape == x.shape and bool((low.amax(dim=-1) < -1e4).all())
    assert bool(torch.isfinite(low).all()) and float(low.amin()) > -torch.finfo(torch.float32).max / 2
    high = apply_distribution([x], "far", 5)[0]  # odd seed: every row above +1e4
    assert bool((high.amin(dim=-1) > 1e4).all())
    half = apply_distribution([x.half()], "far", 2)[0]
    assert bool(torch.isfinite(half).all()) and bool((half.amax(dim=-1) < -9e3).all())
    # every task that reduces its inputs gets it, listed or not
    meta = TaskMeta(level=1, category="softmax", dtype="float32", distributions=["normal"],
                    shapes={"nominal": {"B": 4}})
    assert "far" in meta.distributions


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("task,name,backend", [("softmax", "softmax_pad_minus_1e4.py", "triton-interp"),
                                               ("max_dim", "max_dim_start_at_minus_1e4.py", "triton-interp"),
                                               ("max_dim", "tvm_max_start_at_minus_1e4/graph.py", "tvm-llvm")])
def test_rt54_finite_padding_sentinel_is_incorrect(kstrata_eval, task, name, backend):
    d = kstrata_eval(task, f"rt54_far_padding_sentinel/{name}", "--no-time", "--scope", "small", backend=backend)
    assert d["verdict"] == "incorrect", f"{d['verdict']}: {d.get('message')}"
    assert d["evidence"]["test"]["distribution"] == "far"


def test_rt54_octave_probes_land_on_multiples_of_a_block():
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.plan import octave_tests

    task = resolve_task("sum_dim")
    for k in range(6):
        sizes = [t.shape_dict["D"] for t in octave_tests(task, f"rt54-{k}", task.sweep_shapes)]
        # some probe's row length is a multiple of two 1024-wide blocks or more, for every secret
        assert any(d >= 2048 and d % 1024 == 0 for d in sizes), sizes
        for d in sizes:
            if d > 16 and d != 1001:  # in an octave (2^j, 2^(j+1)]: a multiple of 2^(j-1)
                j = (d - 1).bit_length() - 1
                assert d % 2 ** (j - 1) == 0, (d, sizes)


@pytest.mark.slow
@needs_sandbox
def test_rt54_a_bug_at_multiples_of_the_block_is_incorrect(kstrata_eval):
    d = kstrata_eval("sum_dim", "rt54_multiple_of_block/sum_last_block_skipped.py", "--no-time", "--scope", "full",
                     backend="triton-interp")
    assert d["verdict"] == "incorrect", f"{d['verdict']}: {d.get('message')}"
