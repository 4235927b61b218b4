"""What a change at one level does to the levels below it (queue round 5).

A TVM candidate's ``source`` level is generated from its graph and schedule,
and the backend builds the lowest level present: the single LLM proposer kept
the parent's source under a graph or schedule change, so the change never ran
(rmsnorm: a graph without the weight multiply read correct). The hierarchical
proposer dropped every level below, TileLang's ``source`` too, which reads the
``schedule`` level's overrides: each schedule change there made a candidate
without its kernel ("a TileLang candidate needs a 'source' level")."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.memory import MemoryStore
from kstrata.agents.router import derived_below
from kstrata.backends.registry import get_backend
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

GRAPH = "# kstrata-tvm graph\n# build: symbolic\ny = x * rstd * w\n"
TVM = {"graph": GRAPH, "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n",
       "source": "; kstrata-tvm source target=llvm shape=symbolic\ndefine void @f() {\n  ret void\n}\n"}
GRAPH_EDIT = "Drop a pass.\n\n<<<<<<< SEARCH\ny = x * rstd * w\n=======\ny = x * (rstd * w)\n>>>>>>> REPLACE\n"
TL_SOURCE = ("SCHEDULE = {'threads': 1, 'lanes': 16}\n\nimport tilelang\n\n\n@tilelang.jit(out_idx=[-1])\n"
             "def k(rows, d, threads, lanes):\n    pass\n\n\nclass ModelNew:\n    def forward(self, x):\n"
             "        return k(x.shape[0], x.shape[1], SCHEDULE['threads'], SCHEDULE['lanes'])(x)\n")
TL = {"graph": "one kernel", "schedule": '{"threads": 1}', "source": TL_SOURCE}
TL_EDIT = 'More lanes per step.\n\n```json\n{"threads": 1, "lanes": 32}\n```\n'


def _propose(kind, backend, sources, level, answer, backend_name):
    root = rec("a", sources=sources, backend=backend_name)
    tree = CandidateTree([root])
    provider = ScriptedProvider([answer])
    if kind == "llm":
        prop = LLMProposer(provider, NoLog(), backend=backend)
    else:
        prop = HierarchicalProposer(backend, agents={level: LevelAgent(provider, NoLog(), level)},
                                    memory=MemoryStore(":memory:"))
    ctx = ProposeContext(backend=backend_name, levels=backend.levels, tree=tree)
    out = prop.propose(resolve_task("rmsnorm"), tree["a" * 8], {}, level, context=ctx)
    (p,) = out.proposals
    return p, provider.prompts[0][1]["content"]


def test_only_generated_text_is_derived():
    assert derived_below("tvm-llvm", "graph") == ("source",)
    assert derived_below("tvm-cuda", "schedule") == ("source",)
    assert derived_below("tvm-llvm", "source") == ()
    assert derived_below("tilelang-c", "schedule") == ()
    assert derived_below("triton-interp", "source", ("source",)) == ()


@pytest.mark.parametrize("kind", ["llm", "hierarchical"])
def test_a_tvm_graph_change_drops_the_source_that_would_run_instead_and_says_so(kind):
    p, user = _propose(kind, StubBackend(), TVM, "graph", GRAPH_EDIT, "tvm-llvm")
    assert "y = x * (rstd * w)" in p.sources["graph"]
    assert "source" not in p.sources and p.metadata["dropped_levels"] == ["source"]
    assert ("## Level `source` (read-only here; it is what runs now (the lowest level present is what is "
            "built), and a `graph` change drops it: the candidate your change makes is built from its graph "
            "and schedule levels)") in user


def test_a_tvm_schedule_change_drops_the_source_too():
    p, user = _propose("llm", StubBackend(), TVM, "schedule",
                       "Parallel rows.\n\n<<<<<<< SEARCH\n    pass\n=======\n    sch.parallel(sch.get_loops("
                       "sch.get_sblock(\"y\"))[0])\n>>>>>>> REPLACE\n", "tvm-llvm")
    assert "source" not in p.sources and p.metadata["dropped_levels"] == ["source"]
    assert ("a `schedule` change drops it: the candidate your change makes is built from its graph and schedule "
            "levels)") in user


@pytest.mark.parametrize("kind", ["llm", "hierarchical"])
def test_a_tilelang_schedule_change_keeps_the_source_that_reads_it(kind):
    p, user = _propose(kind, get_backend("tilelang-c"), TL, "schedule", TL_EDIT, "tilelang-c")
    assert p.sources["source"] == TL_SOURCE and '"lanes": 32' in p.sources["schedule"]
    assert "dropped_levels" not in p.metadata
    assert "is what runs now" not in user
