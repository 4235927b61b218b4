"""A graph change made by the single LLM proposer on TVM replays the parent's
schedule on the new graph, as the hierarchical proposer's does (queue round of
2026-12-05 on tvm-opencl): the schedule was kept as written, and a graph change
that renamed the scheduled PrimFunc (a divide made a multiply:
``fused_divide_tir_round_...`` became ``fused_divide_multiply_tir_round_...``)
read compile_error "no PrimFunc named 'fused_divide_tir_round_tir_clip_cast'"."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.llm_agent import LLMProposer
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

pytest.importorskip("tvm")

OLD = "fused_divide_tir_round_tir_clip_cast"
SCHEDULE = f'''# kstrata-tvm schedule: one `def schedule_<primfunc>(sch)` per scheduled PrimFunc


def schedule_{OLD}(sch):
    for name in ("T_divide", "compute", "compute1"):
        sch.compute_inline(sch.get_sblock(name))
    i, j = sch.get_loops(sch.get_sblock("compute2"))
    sch.parallel(i)


def schedule(sch):
    pass
'''
ANSWER = '''Multiply by a once-computed 1/s instead of dividing every element.

<<<<<<< SEARCH
            lv: R.Tensor((s77, s27), dtype="float32") = R.divide(x, scale)
=======
            inv: R.Tensor((1,), dtype="float32") = R.divide(R.const(1.0, "float32"), scale)
            lv: R.Tensor((s77, s27), dtype="float32") = R.multiply(x, inv)
>>>>>>> REPLACE
'''


def test_a_graph_change_that_renames_the_scheduled_primfunc_gets_the_schedule_replayed():
    from kstrata.backends.registry import get_backend

    backend = get_backend("tvm-llvm")
    task = resolve_task("quantize_per_tensor")
    graph = backend.initial_sources(task)["graph"]
    assert "R.divide(x, scale)" in graph
    root = rec("a", sources={"graph": graph, "schedule": SCHEDULE}, speedup=1.0)
    tree = CandidateTree([root])
    node = tree[root.hash]
    prop = LLMProposer(ScriptedProvider([ANSWER]), NoLog(), backend=backend)
    batch = prop.propose(task, node, node.feedback(), "graph",
                         context=ProposeContext(backend="tvm-llvm", levels=backend.levels, tree=tree))
    (p,) = batch.proposals
    assert "R.multiply(x, inv)" in p.sources["graph"]
    report = p.metadata["replay"]
    assert [f["func"] for f in report["failed"]] == [OLD], report
    assert f"def schedule_{OLD}(" not in p.sources["schedule"]  # no longer names a PrimFunc that is gone
    assert any("multiply" in f for f in report["funcs"]), report
