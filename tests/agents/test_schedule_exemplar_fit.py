"""The schedule that goes with a graph exemplar reaches the schedule role
when the new graph adapts the exemplar's PrimFunc under another name (queue
round of 2026-12-05, add_layernorm hierarchical on tvm-llvm): the norm
exemplar's rows PrimFunc, written as ``add_layer_norm_rows`` (the residual add
inlined, the same blocks), got only the elementwise exemplar, though the graph
prompt had promised its schedule to the schedule role."""

from __future__ import annotations

from agent_fakes import NoLog, ScriptedProvider, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.memory import MemoryStore
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

#: the graph the graph role sent: the exemplar's PrimFunc with x + r inlined, named add_layer_norm_rows
GRAPH = '# kstrata-tvm graph\n# inputs: 2\n# params: weight, bias\n# output: single\n# fusion: ops+tir\n# shape: symbolic\n# build: symbolic\n# from typing import TypeVar\n# from tvm.script import ir as I\n# from tvm.script import relax as R\n# from tvm.script import tirx as T\n\ns22 = TypeVar("s22")\ns27 = TypeVar("s27")\n@I.ir_module\nclass Module:\n    @T.prim_func(private=True, s_tir=True)\n    def add_layer_norm_rows(var_x: T.handle, var_r: T.handle, var_w: T.handle, var_b: T.handle, var_y: T.handle):\n        T.func_attr({"tirx.noalias": True})\n        n, d = T.int64(), T.int64()\n        x = T.match_buffer(var_x, (n, d), "float32")\n        r = T.match_buffer(var_r, (n, d), "float32")\n        w = T.match_buffer(var_w, (d,), "float32")\n        b = T.match_buffer(var_b, (d,), "float32")\n        y = T.match_buffer(var_y, (n, d), "float32")\n        s_part = T.sblock_alloc_buffer((n, T.int64(16)), "float32")\n        s_sum = T.sblock_alloc_buffer((n,), "float32")\n        mean = T.sblock_alloc_buffer((n,), "float32")\n        q_part = T.sblock_alloc_buffer((n, T.int64(16)), "float32")\n        q_sum = T.sblock_alloc_buffer((n,), "float32")\n        rstd = T.sblock_alloc_buffer((n,), "float32")\n        for i in range(n):\n            for c, l in T.grid((d + T.int64(15)) // T.int64(16), T.int64(16)):\n                with T.sblock("s_part"):\n                    vi, vc, vl = T.axis.remap("SRS", [i, c, l])\n                    with T.init():\n                        s_part[vi, vl] = T.float32(0.0)\n                    s_part[vi, vl] = s_part[vi, vl] + T.if_then_else(vc * T.int64(16) + vl < d, x[vi, vc * T.int64(16) + vl] + r[vi, vc * T.int64(16) + vl], T.float32(0.0))\n            for l in range(T.int64(16)):\n                with T.sblock("s_sum"):\n                    vi, vl = T.axis.remap("SR", [i, l])\n                    with T.init():\n                        s_sum[vi] = T.float32(0.0)\n                    s_sum[vi] = s_sum[vi] + s_part[vi, vl]\n            with T.sblock("mean"):\n                vi = T.axis.spatial(n, i)\n                mean[vi] = s_sum[vi] / T.Cast("float32", d)\n            for c, l in T.grid((d + T.int64(15)) // T.int64(16), T.int64(16)):\n                with T.sblock("q_part"):\n                    vi, vc, vl = T.axis.remap("SRS", [i, c, l])\n                    with T.init():\n                        q_part[vi, vl] = T.float32(0.0)\n                    q_part[vi, vl] = q_part[vi, vl] + T.if_then_else(vc * T.int64(16) + vl < d, (x[vi, vc * T.int64(16) + vl] + r[vi, vc * T.int64(16) + vl] - mean[vi]) * (x[vi, vc * T.int64(16) + vl] + r[vi, vc * T.int64(16) + vl] - mean[vi]), T.float32(0.0))\n            for l in range(T.int64(16)):\n                with T.sblock("q_sum"):\n                    vi, vl = T.axis.remap("SR", [i, l])\n                    with T.init():\n                        q_sum[vi] = T.float32(0.0)\n                    q_sum[vi] = q_sum[vi] + q_part[vi, vl]\n            with T.sblock("rstd"):\n                vi = T.axis.spatial(n, i)\n                rstd[vi] = T.rsqrt(q_sum[vi] / T.Cast("float32", d) + T.float32(1.0000000000000001e-05))\n            for j in range(d):\n                with T.sblock("y"):\n                    vi, vj = T.axis.remap("SS", [i, j])\n                    y[vi, vj] = (x[vi, vj] + r[vi, vj] - mean[vi]) * rstd[vi] * w[vj] + b[vj]\n\n    @R.function\n    def main(x: R.Tensor((s22, s27), dtype="float32"), r: R.Tensor((s22, s27), dtype="float32"), p_weight: R.Tensor((s27,), dtype="float32"), p_bias: R.Tensor((s27,), dtype="float32")) -> R.Tuple(R.Tensor((s22, s27), dtype="float32")):\n        R.func_attr({"tir_var_lower_bound": {"s22": 1, "s27": 1}})\n        cls = Module\n        with R.dataflow():\n            lv = R.call_tir(cls.add_layer_norm_rows, (x, r, p_weight, p_bias), out_ty=R.Tensor((s22, s27), dtype="float32"))\n            gv: R.Tuple(R.Tensor((s22, s27), dtype="float32")) = (lv,)\n            R.output(gv)\n        return gv\n'
SCHEDULE = "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"


class Stub:
    name, levels = "tvm-llvm", ("graph", "schedule", "source")

    def level_context(self, task, sources, level):
        return {}


def _schedule_prompt(graph: str) -> str:
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: just looking"])
    b = Stub()
    prop = HierarchicalProposer(b, agents={"schedule": LevelAgent(provider, NoLog(), "schedule")},
                                memory=MemoryStore(":memory:"))
    root = rec("a", sources={"graph": graph, "schedule": SCHEDULE}, speedup=1.0)
    tree = CandidateTree([root])
    node = tree[root.hash]
    try:
        prop.propose(resolve_task("add_layernorm"), node, node.feedback(), "schedule",
                     context=ProposeContext(backend=b.name, levels=b.levels, tree=tree))
    except Exception:  # noqa: BLE001 - the scripted decline
        pass
    return provider.prompts[0][1]["content"]


def test_an_adapted_primfunc_gets_the_exemplars_schedule_renamed_for_it():
    user = _schedule_prompt(GRAPH)
    assert "# Schedules that go with the graph exemplars" in user
    assert "its schedule function renamed for this graph's PrimFunc" in user
    assert "def schedule_add_layer_norm_rows(sch):" in user
    assert "def schedule_layer_norm_rows(sch):" not in user


def test_a_graph_without_the_exemplars_blocks_gets_no_schedule_exemplar():
    user = _schedule_prompt(GRAPH.replace('"q_part"', '"q_lanes"').replace("q_part", "q_lanes"))
    assert "# Schedules that go with the graph exemplars" not in user
