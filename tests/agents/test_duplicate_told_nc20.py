"""Newcomer nc20: an answer that repeated candidate 446ec775 used the last
format retry of an expansion; the loop stored it as unusable and the next
expansion asked the original prompt again (570384b42dc0e732-2) with no word of
it, so a temperature-0 model sent the same text again. The next prompt says
which candidate the answer repeated and asks for a different change."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.memory import MemoryStore
from kstrata.agents.router import Declined
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.search.tree import CandidateTree
from kstrata.store.records import ExpansionRecord
from kstrata.tasks.loader import resolve_task

ROOT = {"graph": "# kstrata-tvm graph\n# build: symbolic\n",
        "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"}
PARALLEL = ("# kstrata-tvm schedule\n\n\ndef schedule_softmax(sch):\n"
            "    sch.parallel(sch.get_loops(sch.get_sblock(\"T_softmax_norm\"))[0])\n")
UNROLL = PARALLEL + "    sch.unroll(sch.get_loops(sch.get_sblock(\"T_softmax_norm\"))[-1])\n"
CUT = "Parallelize.\n\n```python\n# kstrata-tvm schedule\n\n\ndef schedule_softmax(sch):\n"
REPEAT = f"Parallelize the rows.\n\n```python\n{PARALLEL}```\n"
DECLINE = "DECLINE\nDIAGNOSIS: nothing else"


def _proposer(kind, provider):
    if kind == "llm":
        return LLMProposer(provider, NoLog(), backend=StubBackend())
    return HierarchicalProposer(StubBackend(), agents={"schedule": LevelAgent(provider, NoLog(), "schedule")},
                                memory=MemoryStore(":memory:"))


@pytest.mark.parametrize("kind", ["llm", "hierarchical"])
def test_a_duplicate_on_the_last_retry_is_named_in_the_next_prompt(kind):
    task = resolve_task("softmax")
    first = rec("c", "schedule", ("a",), sources={**ROOT, "schedule": PARALLEL}, speedup=1.5, expansion_id=1)
    first.hash = content_hash(normalize_sources(first.sources), "tvm-llvm", task.digest)
    current = rec("b", "schedule", sources={**ROOT, "schedule": UNROLL}, speedup=1.2, expansion_id=2)
    current.parents = (first.hash,)
    records = [rec("a", sources=ROOT, speedup=1.0), first, current]
    ctx = ProposeContext(backend="tvm-llvm", levels=("graph", "schedule", "source"), tree=CandidateTree(records))
    node = ctx.tree["b" * 8]
    # the expansion: a cut-off answer, then on the retry the text of candidate `first`
    provider = ScriptedProvider([CUT, REPEAT])
    batch = _proposer(kind, provider).propose(task, node, node.feedback(), "schedule", context=ctx)
    assert not batch.proposals and len(provider.prompts) == 2
    error = "malformed proposals: " + "; ".join(batch.problems[:5])  # as the search loop stores it
    tree = CandidateTree(records, [ExpansionRecord(candidate=node.hash, level="schedule", proposer=kind,
                                                   n_malformed=2, error=error, id=3)])
    # the next expansion of the same candidate and level
    provider = ScriptedProvider([DECLINE])
    with pytest.raises(Declined):
        _proposer(kind, provider).propose(task, tree[node.hash], node.feedback(), "schedule",
                                          context=ProposeContext(backend="tvm-llvm", levels=ctx.levels, tree=tree))
    user = provider.prompts[0][-1]["content"]
    assert f"exactly candidate {first.hash[:8]}" in user, user[-3000:]
    assert "different change" in user


def test_a_proposal_the_run_has_is_said_in_the_expansion_and_the_next_prompt(tmp_path):
    """The loop's own duplicate check (a proposal whose sources the run has, which the
    proposer did not catch) dropped it without a word: the expansion's error was None."""
    from kstrata.agents.base import Proposal
    from kstrata.agents.run_history import earlier_answers
    from kstrata.backends.registry import get_backend
    from kstrata.search import Budget, optimize
    from kstrata.store.run_store import RunStore

    source = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"

    class Again:
        name = "again"

        def propose(self, task, candidate, feedback, level, *, context):
            return [Proposal(sources=dict(candidate.sources), level="source", role="again", rationale="same")]

    class Correct:
        def evaluate(self, task, backend, sources):
            return {"verdict": "correct", "feedback": []}, {"median_ms": 1.0, "speedups": {"eager": {"value": 1.0}}}

    res = optimize(resolve_task("relu"), get_backend("pytorch"), Again(), Correct(), "greedy",
                   Budget(evaluations=3, wall_clock_s=120), tmp_path / "run", initial_sources={"source": source})
    store = RunStore.open(res.run_dir)
    errors = [e.error for e in store.expansions()]
    assert errors and all(f"exactly candidate {res.best.hash[:8]}" in (err or "") for err in errors), errors
    tree = CandidateTree.from_store(store)
    (told,) = [e for e in earlier_answers(tree, tree[res.best.hash]) if e["kind"] == "duplicate"]
    assert told["hash"] == res.best.hash[:8]
