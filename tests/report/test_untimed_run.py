"""The report of a run whose candidates were verified but never timed (a triton-interp run, newcomer
nc17): its fast_p above 0 reads "not measured" (–), not 0%, and its environment section says why it
holds no timer's device instead of printing ``{}``."""

from __future__ import annotations

import kstrata
from kstrata.backends.registry import get_backend
from kstrata.bench.results import load_results
from kstrata.report.html import build_context
from kstrata.search import Budget, optimize

RELU = '''import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
'''


class _CorrectUntimed:
    """Stands in for the verifier: correct, and no timing (as the interpreter's runs)."""

    def evaluate(self, task, backend, sources):
        return {"verdict": "correct", "feedback": []}, None


class _NoProposer:
    name = "none"

    def propose(self, *a, **k):
        return []


def test_an_untimed_runs_report_says_fast_p_was_not_measured(tmp_path):
    res = optimize(kstrata.load_task("relu"), get_backend("pytorch"), _NoProposer(), _CorrectUntimed(), "greedy",
                   Budget(evaluations=1), tmp_path / "run", initial_sources={"source": RELU})
    ctx = build_context(load_results(res.run_dir, count_initial=True), count_initial=True)
    (row,) = ctx["leaderboard"]
    metrics = row["metrics"]
    assert metrics["fast_0"]["value"] == "100%"
    assert metrics["fast_1"]["value"] == "–" and metrics["fast_2"]["value"] == "–", metrics
    assert ctx["environment_json"] != "{}" and "no candidate of the run was timed" in ctx["environment_json"]
