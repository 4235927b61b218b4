"""The shipped cassette replays offline and reproduces the recorded run.

``cassettes/softmax_tvm-llvm.jsonl`` holds a real exchange: kstrata's prompts
for the suite task ``softmax`` on ``tvm-llvm``, answered through the queue
provider by an engineer, answers kept as given. Replaying it through
``--llm replay:FILE`` must give the same candidates (content hashes), lineage
and verdicts, with every proposer call answered from the cassette.

Candidates are timed at the task's fitted CPU shape (what ``kstrata optimize``
uses on a CPU) and verified at small scope without the full-scope
confirmation (the sweep shapes' float64 oracle needs memory a shared machine
may not have). The outcome must not depend on how loaded the machine is. Verification runs
for real; timing runs too (its lines are in the prompts, which replay matches
with measured values masked, see :func:`kstrata.llm.cassette.mask_measured`),
but what the evaluator and the search decide by is taken from the recorded
run: the speedups, and the trust in them (a loaded machine's noisy timing
would otherwise be re-timed, marked untrusted, ranked 0 and steer the greedy
policy to another candidate than the recorded one).

When the prompts change, this test fails (a prompt finds no recorded answer):
re-record both files with ``tests/agents/record_cassette.py QUEUE_DIR``,
answering the prompts it writes as the model would.
"""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kstrata.agents.registry import make_proposer
from kstrata.llm.cassette import NEAREST_MARK
from kstrata.backends.registry import get_backend
from kstrata.search.budget import Budget
from kstrata.search.candidate import content_hash
from kstrata.search.evaluators import VerifyMeasureEvaluator
from kstrata.search.loop import SearchSettings, optimize
from kstrata.store.run_store import RunStore
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task
from kstrata.tasks.scaling import fitted_shape

ROOT = Path(__file__).resolve().parents[2]
CASSETTE = ROOT / "cassettes" / "softmax_tvm-llvm.jsonl"
RECORDED = json.loads((ROOT / "cassettes" / "softmax_tvm-llvm.run.json").read_text())
BY_HASH = {c["hash"]: c for c in RECORDED["candidates"]}


class RecordedSpeedups(VerifyMeasureEvaluator):
    """Real verification and timing, but every decision the evaluator and the
    search take by timing sees the recorded run: each timing's speedup is the
    recorded one, and it is never noisy or suspicious (so no re-timing, no
    untrusted-timing mark, and the would-be-best confirmations follow the
    recorded speedups; ``retimes=0`` below, so no re-timing inside a timing
    call). The measured time, roofline and profiler findings stay
    real: they reach the prompts, where replay masks them."""

    def evaluate(self, task, backend, sources):
        h = content_hash(sources, backend.name, task.digest)
        assert h in BY_HASH, f"replay produced a candidate the recorded run did not have: {h[:12]}"
        return super().evaluate(task, backend, sources)

    def _time(self, task, backend, sources, baseline, **kwargs):
        m = super()._time(task, backend, sources, baseline, **kwargs)
        s = BY_HASH[content_hash(sources, backend.name, task.digest)]["speedup_eager"]
        return replace(m, speedup=replace(m.speedup, point=s, low=s, high=s), noisy=False, suspicious=[])


@pytest.mark.slow
def test_replaying_the_cassette_reproduces_candidates_and_verdicts(tmp_path, monkeypatch):
    from kstrata.measure.timing import TimingConfig

    # the prompts name the CPU spec they were recorded on (x86-avx2 / x86-avx512): replay under the same one
    monkeypatch.setenv("KSTRATA_CPU_SPEC", RECORDED["cpu_spec"])

    task = resolve_task(RECORDED["task"])
    backend = get_backend(RECORDED["backend"])
    proposer = make_proposer("llm", backend=backend, llm=f"replay:{CASSETTE}")
    # retimes=0: a doubtful timing is not re-timed inside the timing call either (under load each
    # would-be best was timed up to three times, for a speedup the recorded one replaces)
    evaluator = RecordedSpeedups(secret="replay-test", timing_config=TimingConfig(budget_ms=50, max_remeasure=0),
                                 shape=fitted_shape(task), confirm_scope=None, retimes=0)
    # policy and router as `kstrata optimize --proposer llm` takes them
    result = optimize(task, backend, proposer, evaluator, policy=proposer.policy("greedy"), router=proposer.router,
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
    n = sum(1 for line in CASSETTE.read_text().splitlines() if line.strip())  # one record per exchange
    assert len(calls) == n and all(c["provider"].startswith("replay:") for c in calls)
    assert [c["error"] for c in calls] == [None] * n  # every prompt found its recorded answer
    assert not [c["provider"] for c in calls if NEAREST_MARK in c["provider"]]  # its own, not the closest one
