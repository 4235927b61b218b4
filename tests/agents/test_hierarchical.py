"""The hierarchical agent end to end: LLM roles through the queue provider (a
helper thread answers per role), the real TVM backend and verifier, the
feedback router, the rebuild after a graph change, and `kstrata tree`."""

from __future__ import annotations

import os
import re
import threading

import pytest
from typer.testing import CliRunner

from kstrata.agents.hierarchical import Ablations, HierarchicalProposer, LevelAgent, LinearPolicy
from kstrata.agents.memory import MemoryStore, Skill
from kstrata.llm import CallLog, ProviderSpec
from kstrata.search.loop import SearchSettings, optimize
from kstrata.search.tree import CandidateTree
from kstrata.store.run_store import RunStore

ROLE = re.compile(r"You are the (graph|schedule|source)-level agent")


class VerifyOnly:
    """The real verifier (public + small hidden scope, shared pool); no timing
    (matmul_bias_relu's nominal 4096^3 GEMM is too slow to time unscheduled on CPU)."""

    def __init__(self, pool):
        self.pool = pool

    def evaluate(self, task, backend, sources):
        from kstrata.verify import verify_candidate

        return verify_candidate(task, backend.name, sources, secret="s" * 64, pool=self.pool,
                                scope="small", timeout_s=180), None


def _answers(task, backend):
    """Scripted answers per role, made from the real lowered PrimFuncs."""
    from kstrata.backends.tvm.lower import with_fusion
    from kstrata.backends.tvm.rules import schedule_variants

    src = backend.initial_sources(task)
    fused = backend.lower(task, src, task.nominal_shape).funcs
    split = backend.lower(task, {**src, "graph": with_fusion(src["graph"], "none")}, task.nominal_shape).funcs
    first = next(v for v in schedule_variants(fused, "", rules=["parallel_vectorize"])
                 if v.func == "fused_matmul_add_relu")
    again = next(v for v in schedule_variants(split, "", rules=["parallel_vectorize"]) if v.func == "matmul")
    return {
        "schedule-1": ("Parallelize the rows of the fused GEMM.\n"
                       "CROSS-LEVEL REQUEST: graph: unfuse matmul, bias and relu so the GEMM gets its own schedule\n"
                       f"```python\n{first.text}```\n"),
        "graph": ("Unfuse the epilogue so the GEMM is its own PrimFunc.\n<<<<<<< SEARCH\n# fusion: ops+tir\n"
                  "=======\n# fusion: none\n>>>>>>> REPLACE\n"),
        "schedule-2": ("Reschedule the unfused GEMM: parallel rows.\n"
                       "CROSS-LEVEL REQUEST: source: use FMA intrinsics in the GEMM inner loop\n"
                       f"```python\n{again.text}```\n"),
        "source-1": "I would rewrite the inner loop with AVX-512 FMAs.",  # no code: unusable
        "source-2": "Hand-written IR.\n```llvm\n; kstrata-tvm source\nnot llvm at all\n```\n",
    }


def _person(directory, answers, stop, seen):
    while not stop.is_set():
        for p in sorted(directory.glob("*.prompt.md")):
            out = p.with_name(p.name.replace(".prompt.md", ".response.md"))
            if out.exists():
                continue
            text = p.read_text()
            role = ROLE.search(text).group(1)
            if role == "schedule":
                key = "schedule-2" if "# Rebuild after a graph change" in text else "schedule-1"
            elif role == "source":
                key = "source-2" if "could not be used" in text else "source-1"
            else:
                key = "graph"
            seen.append((key, text))
            tmp = out.with_name("." + out.name + ".tmp")
            tmp.write_text(answers[key])
            os.replace(tmp, out)
        stop.wait(0.02)


@pytest.mark.slow
def test_hierarchical_roles_router_and_rebuild_through_the_queue(tmp_path):
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for
    from kstrata.tasks.loader import resolve_task

    task, backend = resolve_task("matmul_bias_relu"), get_backend("tvm-llvm")
    log = CallLog()
    provider = ProviderSpec.parse(f"queue:{tmp_path / 'q'}").build(accounting=log)
    provider.poll_s = 0.02
    agents = {lv: LevelAgent(provider, log, lv) for lv in backend.levels}
    memory = MemoryStore(tmp_path / "memory.db")
    memory.add_skill(Skill(backend="tvm-llvm", level="schedule", before="", after="sch.parallel(i)\n",
                           speedup=3.0, task="linear_gelu", category="fusion",
                           description="parallel GEMM rows", search_text="fusion linear matmul add"))
    prop = HierarchicalProposer(backend, agents=agents, memory=memory, ablations={"linear": True})
    stop, seen = threading.Event(), []
    threading.Thread(target=_person, args=(provider.directory, _answers(task, backend), stop, seen),
                     daemon=True).start()
    pool = pool_for(backend)
    try:
        res = optimize(task, backend, prop, VerifyOnly(pool), policy=prop.policy("greedy"),
                       budget=__import__("kstrata.search.budget", fromlist=["Budget"]).Budget(evaluations=4),
                       run_dir=tmp_path / "run", router=prop.router,
                       settings=SearchSettings(level_order=("schedule", "graph", "source")))
    finally:
        stop.set()
        pool.close()
    assert isinstance(prop.policy("greedy"), LinearPolicy)
    with RunStore.open(tmp_path / "run") as store:
        tree = CandidateTree.from_store(store, with_sources=True)
        exps = store.expansions()
    nodes = list(tree)
    root, s1, g1, s2 = nodes
    assert [n.level for n in nodes] == [None, "schedule", "graph", "schedule"]
    assert [n.role for n in nodes[1:]] == ["schedule-agent", "graph-agent", "schedule-agent"]
    # each role edited only its level (lower levels rebuilt, upper ones kept)
    for n in nodes[1:]:
        parent = tree[n.parents[0]]
        for lv in ("graph", "schedule"):
            if lv != n.level and not (n.level == "graph" and lv == "schedule"):
                assert n.sources.get(lv) == parent.sources.get(lv), (n.role, lv)
    assert g1.sources["graph"] != s1.sources["graph"] and "# fusion: none" in g1.sources["graph"]
    # the graph change replayed the schedule: the fused PrimFunc's steps no longer apply
    replay = g1.metadata["replay"]
    assert replay["failed"] and all(s["func"] == "fused_matmul_add_relu" for s in replay["failed"])
    assert "matmul" in replay["funcs"] and "schedule_fused_matmul_add_relu" not in g1.sources["schedule"]
    assert g1.correct and s1.correct
    # ... and triggered a schedule-level rebuild of the graph-changed node
    assert s2.parents[0] == g1.hash and s2.level == "schedule"
    assert s2.metadata["rebuild_of"] == g1.hash and s2.metadata["replay"]["failed"] == replay["failed"]
    assert s2.router_reason.startswith(f"rebuild after graph change {g1.hash[:8]}")
    assert "schedule_matmul" in s2.sources["schedule"] and s2.correct
    first_prompt = next(t for k, t in seen if k == "schedule-1")
    assert "# Exemplars for fusion kernels" in first_prompt and "Tiled GEMM schedule" in first_prompt
    assert "# What worked in earlier runs" in first_prompt and "parallel GEMM rows" in first_prompt
    # requests name only levels with something to edit (no source text on a graph+schedule candidate)
    assert "CROSS-LEVEL REQUEST: <graph>" in first_prompt and "<graph|schedule|source>" not in first_prompt
    rebuild_prompt = next(t for k, t in seen if k == "schedule-2")
    assert "no longer apply" in rebuild_prompt and "fused_matmul_add_relu" in rebuild_prompt
    # the cross-level request was parsed, stored and acted on by the router
    assert s1.metadata["cross_level_request"][0]["level"] == "graph"
    assert g1.router_reason.startswith(f"cross-level request from schedule-agent ({s1.hash[:8]})")
    graph_prompt = next(t for k, t in seen if k == "graph")
    assert "unfuse matmul, bias and relu" in graph_prompt
    assert "on the path to this candidate: [schedule, schedule-agent] Parallelize the rows" in graph_prompt
    # the router's choices and reasons are stored with each expansion and candidate
    assert [e.level for e in exps] == ["schedule", "graph", "schedule"]
    assert all(e.router_reason for e in exps) and exps[0].router_reason.startswith("no routed feedback")
    assert [n.router_reason for n in nodes[1:]] == [e.router_reason for e in exps]
    # the request for source stays open, but no source role is called: s2 has no source text
    from kstrata.agents.router import pending_requests

    assert [r["level"] for r in pending_requests(tree, s2)] == ["source"]
    level, reason = prop.router(tree, s2, ["graph", "schedule", "source"], ("source", "graph", "schedule"))
    assert level != "source" and "not source: nothing to edit there" in reason
    key = prop.run_key(task, __import__("types").SimpleNamespace(backend="tvm-llvm", seed=0, tree=tree))
    outcomes = [a.outcome for a in memory.attempts(key)]
    assert outcomes.count("proposed") == 3
    assert len(store_calls(tmp_path / "run")) == 3
    assert "evaluations limit" in res.stop_reason

    # `kstrata tree RUN_DIR` shows role, level and router reason per node
    from kstrata.cli.main import app

    out = CliRunner().invoke(app, ["tree", str(tmp_path / "run")], env={"COLUMNS": "400"})
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    for n in nodes[1:]:
        line = next(ln for ln in lines if n.hash[:8] in ln)
        assert f"{n.level} {n.role}" in line and n.router_reason[:40] in line


def store_calls(run_dir):
    with RunStore.open(run_dir) as store:
        return store.proposer_calls()


def test_ablations_parse_and_switch_the_loop_parts():
    from kstrata.search.policies import GreedyPolicy, default_router

    a = Ablations.parse("flat,linear,unrouted,no-memory,no-lookahead")
    assert (a.flat, a.linear, a.unrouted, a.memory, a.lookahead) == (True, True, True, False, False)
    assert a.names() == ["flat", "linear", "unrouted", "no-memory", "no-lookahead"]
    assert Ablations.parse({"memory": False}) == Ablations(memory=False)
    with pytest.raises(ValueError, match="unknown ablation 'tree'"):
        Ablations.parse("tree")

    class B:
        name, levels = "fake", ("graph", "schedule")

    full = HierarchicalProposer(B(), memory=MemoryStore(":memory:"))
    off = HierarchicalProposer(B(), memory=MemoryStore(":memory:"), ablations=a)
    assert full.name == "hierarchical" and off.name.startswith("hierarchical[flat-linear")
    assert off.memory is None and off.router is default_router and full.router is not default_router
    assert isinstance(full.policy("greedy"), GreedyPolicy) and isinstance(off.policy("greedy"), LinearPolicy)
    assert off.settings(SearchSettings()).lookahead_expansions == 0
    assert full.settings(SearchSettings()).lookahead_expansions == 2


def test_make_proposer_hierarchical_with_builtin_rules(tmp_path):
    from kstrata.agents.registry import NAMES, make_proposer
    from kstrata.backends.registry import get_backend
    from kstrata.cli.errors import OptionError

    assert "hierarchical" in NAMES
    prop = make_proposer("hierarchical", backend=get_backend("tvm-llvm"), memory=tmp_path / "m.db",
                         ablations="unrouted")
    assert prop.rules is not None and not prop.agents and prop.ablations.unrouted
    assert (tmp_path / "m.db").exists()
    with pytest.raises(OptionError, match="--ablate"):
        make_proposer("hierarchical", backend=get_backend("tvm-llvm"), ablations="nope")


def test_optimize_cli_passes_router_policy_and_settings(tmp_path, monkeypatch):
    """`kstrata optimize --proposer hierarchical --ablate ...` hands the agent's
    router, the linear policy and lookahead off to the loop."""
    import kstrata.search.loop as loop
    from kstrata.agents.router import FeedbackRouter
    from kstrata.cli.errors import OptionError
    from kstrata.cli.main import app

    seen = {}

    def fake(*args, **kw):
        seen.update(kw)
        raise OptionError("captured")

    monkeypatch.setattr(loop, "optimize", fake)
    run = CliRunner()
    args = ["optimize", "fused_exp_mean", "--proposer", "hierarchical", "--out", str(tmp_path / "r"),
            "--memory", str(tmp_path / "m.db")]
    out = run.invoke(app, [*args, "--ablate", "linear,no-lookahead"])
    assert out.exit_code == 2 and "captured" in out.output
    assert isinstance(seen["router"], FeedbackRouter) and isinstance(seen["policy"], LinearPolicy)
    assert seen["settings"].lookahead_expansions == 0 and seen["extra_config"]["cli"]["ablate"]
    out = run.invoke(app, [*args[:-2], "--out", str(tmp_path / "s"), "--ablate", "unrouted"])
    assert seen["router"].__name__ == "default_router" and seen["policy"].name == "greedy"
    out = run.invoke(app, ["optimize", "fused_exp_mean", "--ablate", "flat", "--out", str(tmp_path / "t")])
    assert out.exit_code == 2 and "need --proposer hierarchical" in out.output
