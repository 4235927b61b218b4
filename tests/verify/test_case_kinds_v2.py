"""New variants of the verifier's numbered case kinds (``../shared/cases/verify``,
folders ``<kind>_v2_<name>``): each one read a wrong verdict before its fix.
Copies of the case files live under ``tests/verify/cases/``; the CLI runs in
this process with the session's judge pools (``conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kstrata.sandbox import status
from kstrata.tasks.meta import Tolerance
from kstrata.verify.domain import in_domain, inputs_finite, outside_domain

needs_sandbox = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")

CASES_DIR = Path(__file__).resolve().parent / "cases"
STABLE = "22_v2_stable_softmax_naive_task"
LSE = "22_v2_stable_logsumexp_naive_task"


# -- 22: overflow domain (the float64 oracle overflows too) ------------------------------------------------
def test_nan_shared_by_oracle_and_reference_is_outside_the_domain_only_for_finite_inputs():
    x = torch.tensor([[1000.0, 999.0, 998.0], [1.0, 2.0, 3.0]], dtype=torch.float64)
    oracle = torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)  # row 0: inf / inf = NaN in float64
    ref = (torch.exp(x.float()) / torch.exp(x.float()).sum(-1, keepdim=True))
    assert bool(oracle[0].isnan().all()) and bool(ref[0].isnan().all())
    tol = Tolerance()
    assert outside_domain([ref], [oracle], tol) is None  # a NaN draw's propagation stays the contract
    assert "non-finite from finite inputs" in outside_domain([ref], [oracle], tol, inputs_finite([x.float()]))
    mask = in_domain(ref, oracle, tol, True)
    assert mask[0].tolist() == [False] * 3 and mask[1].tolist() == [True] * 3  # row 1 still decides
    assert inputs_finite([x.float(), 3]) and not inputs_finite([torch.tensor([float("nan")])])
    assert not inputs_finite(None)


def test_inf_shared_by_oracle_and_reference_is_outside_the_domain_for_finite_inputs():
    x = torch.tensor([[1000.0, 999.0], [1.0, 2.0]], dtype=torch.float64)
    oracle = torch.log(torch.exp(x).sum(-1))  # [inf, 2.31]: float64 overflows too
    ref = torch.log(torch.exp(x.float()).sum(-1))
    tol = Tolerance()
    assert outside_domain([ref], [oracle], tol) is None
    assert outside_domain([ref], [oracle], tol, True) is not None
    assert in_domain(ref, oracle, tol, True).tolist() == [False, True]
    other = ref.clone()
    other[0] = float("nan")  # the reference disagrees with the oracle's inf: outside, as before
    assert in_domain(other, oracle, tol, False).tolist() == [False, True]


@needs_sandbox
def test_stable_softmax_on_a_textbook_softmax_task_is_correct(kstrata_eval):
    d = kstrata_eval(f"{STABLE}/task.py", f"{STABLE}/candidate.py", "--scope", "small", "--no-time")
    assert d["verdict"] == "correct", (d["verdict"], (d.get("evidence") or {}).get("message"))
    assert any("non-finite from finite inputs" in r for r in d["evidence"].get("outside_domain", [])), d["evidence"]


@needs_sandbox
def test_stable_softmax_still_wrong_where_the_reference_is_finite(kstrata_eval, tmp_path):
    """The excused elements are the shared NaNs only: a stable softmax that drops
    the max's own term is wrong on every finite row and stays incorrect."""
    bad = tmp_path / "bad.py"
    bad.write_text((CASES_DIR / STABLE / "candidate.py").read_text().replace(
        "return e / e.sum(dim=-1, keepdim=True)", "return e / (e.sum(dim=-1, keepdim=True) - 1.0 + 1e-3)"))
    d = kstrata_eval(f"{STABLE}/task.py", str(bad), "--scope", "small", "--no-time")
    assert d["verdict"] == "incorrect", (d["verdict"], (d.get("evidence") or {}).get("message"))


@needs_sandbox
def test_stable_logsumexp_on_a_textbook_logsumexp_task_is_correct(kstrata_eval):
    d = kstrata_eval(f"{LSE}/task.py", f"{LSE}/candidate.py", "--scope", "small", "--no-time")
    assert d["verdict"] == "correct", (d["verdict"], (d.get("evidence") or {}).get("message"))
