"""The report of a run whose candidates were verified but never timed (a triton-interp run, newcomer
nc17): its fast_p above 0 reads "not measured" (–), not 0%, and its environment section says why it
holds no timer's device instead of printing ``{}``."""

from __future__ import annotations

from bench_helpers import untimed_relu_run

from kstrata.bench.results import load_results
from kstrata.report.html import build_context


def test_an_untimed_runs_report_says_fast_p_was_not_measured(tmp_path):
    res = untimed_relu_run(tmp_path / "run")
    ctx = build_context(load_results(res.run_dir, count_initial=True), count_initial=True)
    (row,) = ctx["leaderboard"]
    metrics = row["metrics"]
    assert metrics["fast_0"]["value"] == "100%"
    assert metrics["fast_1"]["value"] == "–" and metrics["fast_2"]["value"] == "–", metrics
    assert ctx["environment_json"] != "{}" and "no candidate of the run was timed" in ctx["environment_json"]


def test_a_bench_cell_whose_only_correct_candidate_is_the_start_says_so(tmp_path):
    """Newcomer nc17: the bench table and the report said "none correct" / "no" for a task whose only
    candidate (the initial one, which the bench does not count) was verified correct."""
    from kstrata.search.views import not_correct_note
    from kstrata.search.tree import CandidateTree
    from kstrata.store.run_store import RunStore

    res = untimed_relu_run(tmp_path / "run")
    with RunStore.open(res.run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
    assert tree.start_correct()
    assert "the initial candidate is not counted" in not_correct_note(tree)
    (cell,) = build_context(load_results(res.run_dir))["cells"]
    assert cell["correct"] == "no (only the initial candidate, not counted)"
