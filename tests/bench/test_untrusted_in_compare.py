"""``kstrata compare`` on two runs whose timings were not trusted (the
newcomer's report): the median roofline fraction is marked as from an
untrusted timing and neither differenced nor compared by interval, as the
report marks it; and fast_0 is KernelBench's (the share correct, DESIGN.md's
fast_p at p = 0), not 0% beside a correct rate of 100%."""

from __future__ import annotations

from kstrata.bench import metrics as M
from kstrata.bench.compare import _cell, _pairs

O = M.TaskOutcome


def _run(roofline: float, trusted: bool) -> list[O]:
    # a correct best whose timing was not trusted has no speedup (results.outcome)
    return [O("rmsnorm", backend="tvm-llvm", proposer="builtin", compiled=True, correct=True,
              speedup=None if not trusted else 1.2, speedup_ci=None if not trusted else (1.1, 1.3),
              roofline_fraction=roofline, roofline_trusted=trusted)]


def test_fast_0_is_the_share_correct_even_without_a_trusted_timing():
    m = M.compute_metrics(_run(0.1, trusted=False) + [O("x", compiled=True)], n_resamples=50)
    assert m["fast_0"].value == m["correct_rate"].value == 0.5
    assert m["fast_1"].value == 0.0  # a speed claim still needs a trusted interval
    assert "correct" in M.LABELS["fast_0"]


def test_an_untrusted_roofline_is_marked_and_not_compared():
    pair = next(p for p in _pairs(_run(0.097, False), _run(0.114, False), n_resamples=50)
                if p.metric == "median_roofline")
    assert pair.untrusted == (1, 1) and pair.diff is None and pair.overlap is None
    assert "untrusted: 1 of 1" in _cell(pair.b, pair.untrusted[1])
    trusted = next(p for p in _pairs(_run(0.097, True), _run(0.114, True), n_resamples=50)
                   if p.metric == "median_roofline")
    assert trusted.diff is not None and "untrusted" not in _cell(trusted.b)
    assert trusted.too_few and trusted.overlap is None  # one task each: point intervals are not compared
