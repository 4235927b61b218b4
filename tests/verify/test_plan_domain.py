"""Seeds and draws at every shape, the timed shape's tests, the native-oracle
bound, and the task's numerical domain (issue #17 items 2-4)."""

from __future__ import annotations

from pathlib import Path

import torch

from kstrata.tasks.loader import load_task, resolve_task
from kstrata.tasks.meta import Tolerance
from kstrata.verify.domain import outside_domain
from kstrata.verify.plan import hidden_tests, timed_shape_tests
from kstrata.verify.tolerance import compare, compare_native

CASES = Path(__file__).resolve().parent / "cases"  # copies of ../shared/cases/verify


def _case_task(name: str, file: str = "task.py"):
    return load_task(CASES / name / file)


def _ref_and_oracle(task, shape, seed, dist):
    from kstrata.tasks.inputs import apply_distribution

    model, _, _, module = task.instantiate(shape, 0)
    torch.manual_seed(seed + 1)
    xs = apply_distribution(list(module.get_inputs()), dist, seed, task.meta.dist_inputs)
    with torch.no_grad():
        ref = model(*xs)
        oracle = model.double()(*[x.double() for x in xs])
    return xs, ref, oracle


def test_large_shape_has_two_seeds_and_two_draws_case02():
    task = _case_task("02_partial_reduction_at_scale")
    tests = hidden_tests(task, "secret")
    large = [t for t in tests if t.shape_dict == {"batch_size": 6144, "dim": 8192}]
    assert len({t.seed for t in large}) >= 2 and len({t.dist for t in large}) >= 2
    assert all(t.oracle == "native" for t in large)  # 402 MB of fp32 inputs: no fp64 oracle
    small = [t for t in tests if t.shape_dict == {"batch_size": 3, "dim": 1001}]
    assert small and all(t.oracle == "fp64" for t in small)


def test_timed_shape_tests_full_protocol_and_hidden():
    task = resolve_task("softmax")
    shape = task.nominal_shape
    tests = timed_shape_tests(task, "s1", shape)
    assert tests == timed_shape_tests(task, "s1", shape)
    assert {t.shape for t in tests} == {tuple(sorted(task.full_shape(shape).items()))}
    assert len({t.seed for t in tests}) >= 2 and len({t.dist for t in tests}) >= 2
    assert not any(t.public for t in tests) and len({t.param_seed for t in tests}) == 1
    assert {t.seed for t in tests}.isdisjoint({t.seed for t in timed_shape_tests(task, "s2", shape)})
    assert {t.seed for t in tests}.isdisjoint({t.seed for t in hidden_tests(task, "s1")})
    big = _case_task("02_partial_reduction_at_scale")
    tests = timed_shape_tests(big, "s1", big.nominal_shape)
    assert len({t.seed for t in tests}) >= 2 and len({t.dist for t in tests}) >= 2
    assert all(t.oracle == "native" for t in tests)


def test_compare_native_derived_bound_catches_case02_partial_mean():
    tol = Tolerance()
    x = torch.randn(4096, dtype=torch.float64)
    native = x.float()
    assert compare_native(native * (1 + 1e-5), native, tol).ok
    assert not compare_native(native * (1 + 1e-3), native, tol).ok
    bad = native.clone()
    bad[7] = float("inf")
    c = compare_native(bad, native, tol)
    assert not c.ok and c.stats["oracle"] == "native"
    # a reference's own error estimate widens the bound proportionately
    assert compare_native(native + 1e-3, native, tol, native_err=1e-3).ok


def test_overflow_draw_is_outside_domain_case22():
    task = _case_task("22_overflow_domain_false_reject")
    tol = task.meta.tolerance
    xs, ref, oracle = _ref_and_oracle(task, None, 5, "large")
    assert not torch.isfinite(ref).all() and torch.isfinite(oracle).all()
    reason = outside_domain([ref], [oracle], tol)
    assert reason is not None and "non-finite" in reason
    assert not any(str(n) in reason for n in (512, 32768))  # no hidden element count or extent
    # the case's candidate overflows the same way: without the domain check it is rejected
    cand = torch.exp(xs[0].float()).sum(dim=-1) / xs[0].shape[-1]
    assert not compare(cand, oracle, ref, tol).ok
    # every other draw is inside the domain, so those tests still decide the verdict
    for dist in ("normal", "uniform", "near_zero", "shifted", "heavy_tailed"):
        _, ref, oracle = _ref_and_oracle(task, None, 5, dist)
        assert outside_domain([ref], [oracle], tol) is None, dist


def test_ordinary_references_are_inside_domain():
    for name in ("softmax", "matmul_square", "layernorm"):
        task = resolve_task(name)
        _, ref, oracle = _ref_and_oracle(task, task.small_shapes[0], 3, "normal")
        refs = ref if isinstance(ref, (tuple, list)) else [ref]
        oracles = oracle if isinstance(oracle, (tuple, list)) else [oracle]
        assert outside_domain(refs, oracles, task.meta.tolerance) is None, name
    o = torch.tensor([1.0, 2.0], dtype=torch.float64)
    wrong = torch.tensor([1.0, 2.5])  # a reference far off the oracle (cancellation)
    assert "outside the task's numerical domain" in outside_domain([wrong], [o], Tolerance())
    nf = torch.tensor([float("inf"), 1.0], dtype=torch.float64)
    assert outside_domain([nf.float()], [nf], Tolerance()) is None  # same non-finite values


def test_nominal_shape_is_always_among_the_hidden_tests(monkeypatch):
    """Case 10: a candidate wrong only at the task's nominal shape must be
    caught whatever shape it is timed at (eval times at the fit shape on CPU)."""
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import plan

    task = resolve_task("softmax")
    tests, why = plan.nominal_tests(task, "s" * 32, "cpu")
    assert why is None and len(tests) == plan.LARGE_SEEDS * plan.LARGE_DRAWS
    assert all(t.shape_dict == task.nominal_shape and not t.public for t in tests)
    assert len({t.seed for t in tests}) == plan.LARGE_SEEDS
    assert len(plan.nominal_tests(task, "s" * 32, "cpu", quick=True)[0]) == 1
    # screening (quick) leaves a large nominal shape to the full-scope confirmation, and says so
    big = resolve_task("scaled_matmul_softmax")
    tests, why = plan.nominal_tests(big, "s" * 32, "cpu", quick=True)
    assert tests == [] and "not verified at scope small" in why
    assert len(plan.nominal_tests(big, "s" * 32, "cpu")[0]) == plan.LARGE_SEEDS * plan.LARGE_DRAWS
    monkeypatch.setattr(plan, "NOMINAL_MAX_CPU_FLOPS", 0.0)
    tests, why = plan.nominal_tests(task, "s" * 32, "cpu")
    assert tests == [] and "not verified" in why   # too large for a CPU: said, not silently skipped
    tests, why = plan.nominal_tests(task, "s" * 32, "cuda:0")
    assert tests and why is None                    # a GPU always runs it
