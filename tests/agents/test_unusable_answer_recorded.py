"""An answer the proposer cannot use is recorded, not dropped (newcomer nc18):
a SEARCH/REPLACE edit whose SEARCH text is not in the source spent the run's
only proposer call, and the run store said n_proposals=0, n_malformed=0,
error=NULL; ``tree`` and the run's end said nothing."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.memory import MemoryStore
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

TVM = {"graph": "# kstrata-tvm graph\n# build: symbolic\ny = x * rstd * w\n",
       "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"}
MISSES = "Fuse.\n\n<<<<<<< SEARCH\ny = x * w * rstd\n=======\ny = x * (rstd * w)\n>>>>>>> REPLACE\n"


def _propose(kind, answers):
    backend = StubBackend()
    tree = CandidateTree([rec("a", sources=TVM, backend="tvm-llvm")])
    provider = ScriptedProvider(answers)
    if kind == "llm":
        prop = LLMProposer(provider, NoLog(), backend=backend)
    else:
        prop = HierarchicalProposer(backend, agents={"graph": LevelAgent(provider, NoLog(), "graph")},
                                    memory=MemoryStore(":memory:"))
    ctx = ProposeContext(backend="tvm-llvm", levels=backend.levels, tree=tree)
    return prop.propose(resolve_task("rmsnorm"), tree["a" * 8], {}, "graph", context=ctx)


@pytest.mark.parametrize("kind", ["llm", "hierarchical"])
def test_an_edit_whose_search_text_is_missing_is_a_recorded_problem(kind):
    out = _propose(kind, [MISSES, MISSES])  # the answer and its format retry
    assert out.proposals == []
    assert len(out.problems) == 2 and all(p.startswith("unusable answer") for p in out.problems)
    assert "y = x * w * rstd" in out.problems[0]  # says which SEARCH text was not found



@pytest.mark.parametrize("kind", ["llm", "hierarchical"])
def test_an_unusable_answer_before_a_decline_is_kept_on_the_decline(kind):
    # newcomer nc19: the model re-asked after the unusable answer declined; the unusable one left no trace
    from kstrata.agents.router import Declined

    with pytest.raises(Declined) as e:
        _propose(kind, [MISSES, "DECLINE\nDIAGNOSIS: nothing more at this level."])
    assert len(e.value.problems) == 1 and "y = x * w * rstd" in e.value.problems[0]
