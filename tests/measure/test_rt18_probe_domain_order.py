"""Issue #18: the timing's probe check asks whether a probe lies outside the
task's numerical domain only when the candidate's outputs failed there (the
answer is the same: a probe outside the domain passes whatever the outputs);
the domain test's float64 passes were a sixth of a CPU timing of rmsnorm at
2048x4096 in which every probe was right."""

from __future__ import annotations

import torch

import kstrata.verify.domain as domain
from kstrata.measure.candidate import _checker
from kstrata.tasks.loader import resolve_task


def _setup(monkeypatch, outside: str | None):
    calls = []

    def fake(refs, ors, tol, *a, **k):
        calls.append(1)
        return outside

    monkeypatch.setattr(domain, "outside_domain", fake)
    task = resolve_task("rmsnorm")
    model, inputs, _, _ = task.instantiate({"B": 4, "D": 64}, 0)
    check = _checker(task, model, [inputs])
    with torch.no_grad():
        right = [model(*inputs)]
    return check, inputs, right, calls


def test_a_right_probe_skips_the_domain_test(monkeypatch):
    check, inputs, right, calls = _setup(monkeypatch, "outside")
    assert check(0, right, list(inputs), None, domain=True, dist="large") is None
    assert calls == []


def test_a_wrong_probe_outside_the_domain_still_passes_and_inside_it_fails(monkeypatch):
    check, inputs, right, calls = _setup(monkeypatch, "outside")
    wrong = [right[0] * 1.5]
    assert check(0, wrong, list(inputs), None, domain=True, dist="large") is None
    assert calls == [1]
    assert check(0, [right[0][:2]], list(inputs), None, domain=True, dist="large") is None  # wrong shape too
    check, inputs, right, calls = _setup(monkeypatch, None)
    assert "elements wrong" in check(0, wrong, list(inputs), None, domain=True, dist="large")
    # a timed call's check (no domain) never asks
    assert "elements wrong" in check(0, wrong)
    assert calls == [1]
