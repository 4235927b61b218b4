"""The shipped cassette replays offline and reproduces the recorded run.

``cassettes/softmax_tvm-llvm.jsonl`` holds a real exchange: kstrata's prompts
for the suite task ``softmax`` on ``tvm-llvm``, answered through the queue
provider by an engineer, answers kept as given. Replaying it through
``--llm replay:FILE`` must give the same candidates (content hashes) and
verdicts. Verification runs for real; the speedups the search ranks by are
taken from the recorded run, since wall-clock timings on a shared CPU differ
from run to run and would otherwise steer the policy elsewhere.
"""

import json
from pathlib import Path

import pytest

from kstrata.agents.registry import make_proposer
from kstrata.backends.registry import get_backend
from kstrata.search.budget import Budget
from kstrata.search.candidate import content_hash
from kstrata.search.evaluators import VerifyMeasureEvaluator
from kstrata.search.loop import SearchSettings, optimize
from kstrata.store.run_store import RunStore
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

ROOT = Path(__file__).resolve().parents[2]
CASSETTE = ROOT / "cassettes" / "softmax_tvm-llvm.jsonl"
RECORDED = json.loads((ROOT / "cassettes" / "softmax_tvm-llvm.run.json").read_text())


class RecordedSpeedups(VerifyMeasureEvaluator):
    """Real verification and timing; the speedup the search ranks by is the recorded one."""

    def evaluate(self, task, backend, sources):
        ev, m = super().evaluate(task, backend, sources)
        h = content_hash(sources, backend.name, task.digest)
        rec = {c["hash"]: c for c in RECORDED["candidates"]}
        assert h in rec, f"replay produced a candidate the recorded run did not have: {h[:12]}"
        if m is not None:
            s = rec[h]["speedup_eager"]
            m = {**m, "speedups": {"eager": {"point": s, "low": s, "high": s}}}
        return ev, m


@pytest.mark.slow
def test_replaying_the_cassette_reproduces_candidates_and_verdicts(tmp_path):
    from kstrata.measure.timing import TimingConfig

    task = resolve_task(RECORDED["task"])
    backend = get_backend(RECORDED["backend"])
    proposer = make_proposer("llm", backend=backend, llm=f"replay:{CASSETTE}")
    evaluator = RecordedSpeedups(secret="replay-test", timing_config=TimingConfig(budget_ms=50, max_remeasure=0))
    result = optimize(task, backend, proposer, evaluator, policy="greedy",
                      budget=Budget(**RECORDED["budget"]), run_dir=tmp_path / "run",
                      settings=SearchSettings(seed=0, lookahead_expansions=2))
    with RunStore.open(result.run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
        calls = store.proposer_calls()
    replayed = {n.hash: str(n.verdict) for n in tree}
    recorded = {c["hash"]: c["verdict"] for c in RECORDED["candidates"]}
    assert replayed == recorded
    assert {n.hash: list(n.parents) for n in tree} == {
        c["hash"]: c["parents"] for c in RECORDED["candidates"]}
    assert len(calls) == 5 and all(c["provider"].startswith("replay:") for c in calls)
