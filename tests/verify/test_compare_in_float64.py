"""``tolerance.compare`` computes its differences in float64 from the task-dtype tensors
(no float64 copies of the candidate and the reference): the verdict and its numbers are
those of the plain float64 formula, for every candidate dtype the comparison accepts."""

from __future__ import annotations

import math

import pytest
import torch

from kstrata.tasks.meta import Tolerance
from kstrata.verify.tolerance import DTYPE_BOUNDS, compare


def _expected(cand: torch.Tensor, oracle: torch.Tensor, native: torch.Tensor) -> tuple[torch.Tensor, float]:
    """The ``oracle`` policy's wrong-element mask and native error, from float64 copies."""
    atol, rtol = DTYPE_BOUNDS[native.dtype]
    o, c, n = oracle.double(), cand.double(), native.double()
    fin = torch.isfinite(n) & torch.isfinite(o)
    native_err = float((n - o).abs()[fin].max())
    largest = float(o.abs()[torch.isfinite(o)].max())
    bound = o.abs() * rtol + (max(0.0, Tolerance(kind="oracle").k * native_err) + atol * min(1.0, largest))
    bad = ~((c - o).abs() <= bound)
    nf = ~torch.isfinite(o)
    same = (torch.isnan(o) & torch.isnan(c)) | (torch.isinf(o) & (c == o))
    return torch.where(nf, ~same, bad), native_err


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.bool])
@pytest.mark.parametrize("oracle_nonfinite", [False, True])
def test_compare_reads_as_the_float64_formula(dtype: torch.dtype, oracle_nonfinite: bool) -> None:
    gen = torch.Generator().manual_seed(3)
    oracle = torch.randn(37, 41, generator=gen, dtype=torch.float64) * 3
    if oracle_nonfinite:
        oracle[0, :3] = torch.tensor([math.nan, math.inf, -math.inf], dtype=torch.float64)
    native = oracle.float()
    cand = (oracle + 1e-3 * torch.randn(37, 41, generator=gen, dtype=torch.float64)).float()
    cand[5, 5] = math.nan
    cand[6, 6] = -math.inf
    cand[0, :3] = native[0, :3]
    cand = cand.to(dtype) if dtype in (torch.float32, torch.float16) else \
        (cand.nan_to_num().round().to(dtype) if dtype == torch.int32 else cand > 0)
    bad, native_err = _expected(cand, oracle, native)
    got = compare(cand, oracle, native, Tolerance(kind="oracle"))
    assert got.stats["native_err"] == native_err
    assert got.stats["wrong"] == int(bad.sum()) > 0
    assert got.bad is not None and torch.equal(got.bad, bad)
    assert not got.ok
    if oracle_nonfinite:
        assert got.stats["oracle_nonfinite_wrong"] == int((bad & ~torch.isfinite(oracle)).sum())


def test_a_candidate_within_the_bound_is_correct_and_its_largest_error_told() -> None:
    oracle = torch.linspace(-2, 2, 1001, dtype=torch.float64)
    native = oracle.float()
    got = compare(native, oracle, native, Tolerance(kind="oracle"))
    assert got.ok and got.bad is None
    assert got.stats["max_err"] == float((native.double() - oracle).abs().max()) > 0
