"""The feedback router's rule: rebuild, cross-level requests, summed
confidence of level-tagged feedback, round-robin otherwise."""

from __future__ import annotations

from kstrata.agents.router import FeedbackRouter, parse_cross_level_requests, pending_requests, signals
from kstrata.search.tree import CandidateTree
from kstrata.store.records import CandidateRecord, EvaluationRecord, MeasurementRecord

LEVELS = ["graph", "schedule", "source"]
PREF = ("graph", "schedule", "source")


def rec(h, level=None, parents=(), metadata=None, verdict="correct", feedback=(), findings=()):
    r = CandidateRecord(hash=h * 8, sources={"graph": h}, level=level, role=f"{level}-agent",
                        proposer="hierarchical", parents=tuple(p * 8 for p in parents),
                        metadata=metadata or {}, status="evaluated")
    r.evaluation = EvaluationRecord(verdict=verdict, feedback=list(feedback))
    if findings:
        r.measurement = MeasurementRecord(median_ms=1.0, findings=list(findings))
    return r


def test_parse_cross_level_requests():
    text = ("Tiled it.\n- CROSS-LEVEL REQUEST: graph: transpose B so k is contiguous\n"
            "cross-level request: source - use FMA\nCROSS-LEVEL REQUEST: nowhere: x\n")
    assert parse_cross_level_requests(text) == [
        {"level": "graph", "text": "transpose B so k is contiguous"},
        {"level": "source", "text": "use FMA"},
    ]


def test_feedback_scores_sum_confidence_per_level():
    node = rec("b", "schedule", ("a",),
               feedback=[{"kind": "incorrect", "level": "schedule", "text": "tail rows wrong"},
                         {"kind": "note", "level": "graph", "text": "layout", "confidence": 0.2}],
               findings=[{"level": "graph", "text": "inputs read 3x", "confidence": 0.5}, "plain text"])
    tree = CandidateTree([rec("a"), node])
    sig = signals(tree["b" * 8])
    assert [(s.level, s.confidence) for s in sig] == [("schedule", 0.6), ("graph", 0.2), ("graph", 0.5)]
    level, reason = FeedbackRouter()(tree, tree["b" * 8], LEVELS, PREF)
    assert level == "graph" and reason.startswith("feedback: graph 0.70 from 2 item(s); schedule 0.60")
    # a closed level is not chosen; below min_score -> round-robin
    assert FeedbackRouter()(tree, tree["b" * 8], ["schedule", "source"], PREF)[0] == "schedule"
    level, reason = FeedbackRouter(min_score=2.0)(tree, tree["b" * 8], LEVELS, PREF)
    assert level == "graph" and reason.startswith("no routed feedback; ")  # then the default router's words


def test_failed_verdict_without_tags_points_at_its_own_level():
    tree = CandidateTree([rec("a"), rec("b", "source", ("a",), verdict="compile_error")])
    level, reason = FeedbackRouter()(tree, tree["b" * 8], LEVELS, PREF)
    assert level == "source" and "verdict:compile_error" in reason


def test_rebuild_first_then_requests_until_served():
    req = {"cross_level_request": [{"level": "source", "text": "use FMA"}]}
    tree = CandidateTree([
        rec("a"),
        rec("b", "schedule", ("a",), metadata=req),
        rec("c", "graph", ("b",), metadata={"replay": {"failed": [{"func": "f", "code": "sch.parallel(l)"}]}}),
    ])
    r = FeedbackRouter()
    level, reason = r(tree, tree["c" * 8], LEVELS, PREF)
    assert level == "schedule" and reason == f"rebuild after graph change {'c' * 8}: 1 schedule step(s) no longer apply: f: sch.parallel(l)"
    tree["c" * 8].expansions["schedule"] += 1  # rebuilt: now the pending request wins
    level, reason = r(tree, tree["c" * 8], LEVELS, PREF)
    assert level == "source" and reason.startswith(f"cross-level request from schedule-agent ({'b' * 8}): use FMA")
    assert FeedbackRouter(requests=False, rebuild=False)(tree, tree["c" * 8], LEVELS, PREF)[0] == "graph"
    served = CandidateTree([*[n.record for n in tree], rec("d", "source", ("c",))])
    assert pending_requests(served, served["d" * 8]) == []
