"""``kstrata tree``/``show`` of a ``kstrata mcp`` run (newcomer nc21): the tree's
header read "? on ?" though every submission named its task and backend, and a
correct candidate whose timing failed (killed at the time limit) was shown as
"correct, not timed"."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from kstrata.serve.mcp_server import KernelServer
from kstrata.serve.service import Outcome
from kstrata.verdict import Verdict
from kstrata.verify.result import Evaluation

TASKS = Path(__file__).parent / "tasks"
WHY = "timing failed (timeout): no answer within 300 s; worker killed"
SOURCE = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"


def _text(renderable) -> str:
    console = Console(width=300, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return " ".join(console.export_text().split())


def _submitted(tmp_path, monkeypatch, **outcome) -> str:
    """The hash of SOURCE submitted through ``kstrata mcp``'s submit_candidate, with the judge
    replaced by a correct verdict and ``outcome``'s :class:`Outcome` fields."""
    def judged(task, backend, sources, **kw):
        ev = Evaluation(verdict=Verdict.CORRECT, public_tests=1, hidden_tests=1)
        return Outcome(verdict="correct", evaluation=ev, **outcome)

    monkeypatch.setattr("kstrata.serve.mcp_server.evaluate", judged)
    srv = KernelServer(tmp_path / "run", backend="pytorch", task_dir=TASKS)
    try:
        return srv.submit_candidate(task="tiny_relu", source=SOURCE)["candidate"]
    finally:
        srv.close()


def test_an_mcp_run_names_its_task_and_backend_and_a_failed_timing(tmp_path, monkeypatch):
    from kstrata.search.views import candidate_view, run_tree

    # correct, and the timing worker killed at its limit
    digest = _submitted(tmp_path, monkeypatch, public={"verdict": "correct",
                                                       "timing": {"available": False, "reason": WHY}})
    tree = _text(run_tree(tmp_path / "run"))
    assert "tiny_relu on pytorch" in tree and "?" not in tree.split("tiny_relu")[0], tree
    assert "timing failed" in tree, tree
    shown = _text(candidate_view(tmp_path / "run", digest[:12]))
    assert WHY in shown, shown
    best = _text(candidate_view(tmp_path / "run"))
    assert "not timed" not in best and "timing failed" in best, best


def _contended_timing():
    """A paired timing the timer flagged (contended), as the worker returns it."""
    from kstrata.measure.stats import RatioCI, summarize
    from kstrata.measure.timing import Measurement

    cand, base = [2.0, 2.5, 3.0, 2.2], [1.8, 2.0, 2.4, 2.1]
    return Measurement(
        method="paired", device="cpu", reps=4, warmup_reps=1, candidate=summarize(cand),
        baseline=summarize(base), speedup=RatioCI(0.839, 0.65, 1.08, 0.95, 100), candidate_ms=cand,
        baseline_ms=base, attempts=[], remeasured=0, noisy=False, flush={}, input_copies=1, settings={},
        versions={}, config={}, suspicious=["contended: other processes kept the CPUs busy"],
        labels={"candidate": "pytorch", "baseline": "eager", "task": "tiny_relu"})


def test_an_mcp_submission_with_a_contended_timing_is_stored_unranked_vs_its_baseline(tmp_path, monkeypatch):
    """newcomer nc23: the reply warned 'contended', but the store ranked it (``show``: "ranked, 0.839x") and
    the speedup row read "vs Spread(n=70, median=...)"; stored as optimize stores the same timing."""
    from kstrata.search.evaluators import one_timing
    from kstrata.search.views import candidate_view, run_tree
    from kstrata.store import RunStore

    m = _contended_timing()

    digest = _submitted(tmp_path, monkeypatch, public={"verdict": "correct", "timing": {"speedup": 0.839}},
                        measurement=m, speedup=0.839)
    with RunStore.open(tmp_path / "run") as store:
        stored = next(c for c in store.candidates() if c.hash == digest).measurement
    assert [s.baseline for s in stored.speedups] == ["eager"], stored.speedups
    assert stored.findings[:1] == one_timing(m)["findings"][:1]
    assert stored.findings[0].startswith("untrusted timing:"), stored.findings
    shown = _text(candidate_view(tmp_path / "run", digest[:12]))
    assert "Spread(" not in shown and "vs eager" in shown, shown
    best = _text(candidate_view(tmp_path / "run"))
    assert "(ranked" not in best, best
    tree = _text(run_tree(tmp_path / "run"))
    assert "unranked (untrusted timing)" in tree, tree


def test_get_best_ranks_a_trusted_timing_above_a_faster_untrusted_one(tmp_path, monkeypatch):
    """The same kind of fault as nc23's stored ranking: get_best took the highest speedup read, a contended
    timing's included; an untrusted reading ranks below every trusted one, and the lineage says which."""
    from dataclasses import replace as replaced

    from kstrata.measure.stats import RatioCI

    contended = replaced(_contended_timing(), speedup=RatioCI(2.5, 1.9, 3.1, 0.95, 100))
    quiet = replaced(_contended_timing(), suspicious=[], speedup=RatioCI(1.2, 1.1, 1.3, 0.95, 100))
    first = _submitted(tmp_path, monkeypatch, public={"verdict": "correct"}, measurement=contended, speedup=2.5)
    srv = KernelServer(tmp_path / "run", backend="pytorch", task_dir=TASKS)
    try:
        monkeypatch.setattr("kstrata.serve.mcp_server.evaluate", lambda *a, **k: Outcome(
            verdict="correct", public={"verdict": "correct"}, measurement=quiet, speedup=1.2,
            evaluation=Evaluation(verdict=Verdict.CORRECT, public_tests=1, hidden_tests=1)))
        second = srv.submit_candidate(task="tiny_relu", source=SOURCE.replace("relu", "clamp_min") + "#\n")
        best = srv.get_best("tiny_relu")
    finally:
        srv.close()
    assert first != second["candidate"]
    assert best["best"]["candidate"] == second["candidate"], best
    assert best["best"]["timing_trusted"] is True, best
