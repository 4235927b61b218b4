"""Memory scoped by run, task and backend; skills only from trusted, verified
timings, filed under their level and backend (issue 19)."""

from __future__ import annotations

from types import SimpleNamespace

from agent_fakes import StubBackend, rec

from kstrata.agents.hierarchical import HierarchicalProposer
from kstrata.agents.memory import Attempt, MemoryStore, Skill
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

GRAPH = {"graph": "# kstrata-tvm graph\n", "schedule": "def schedule(sch):\n    pass\n"}


def _ctx(tree):
    return SimpleNamespace(backend="tvm-llvm", seed=0, tree=tree)


def test_a_fresh_run_does_not_show_the_previous_runs_attempts(tmp_path):
    task = resolve_task("layernorm")
    memory = MemoryStore(tmp_path / "m.db")
    prop = HierarchicalProposer(StubBackend(), memory=memory)
    first = CandidateTree([rec("a", sources=GRAPH, created=100.0)])
    again = CandidateTree([rec("a", sources=GRAPH, created=200.0)])  # same task, backend, seed and root
    k1, k2 = prop.run_key(task, _ctx(first)), prop.run_key(task, _ctx(again))
    assert k1 != k2 and k1 == prop.run_key(task, _ctx(CandidateTree([rec("a", created=100.0)])))  # resume
    memory.add_attempt(k1, Attempt("a" * 8, "source", "source-agent", "parse_error", reason="no code block"))
    assert any("no code block" in h for h in prop.history(k1, first, first["a" * 8], "source"))
    assert not any("no code block" in h for h in prop.history(k2, again, again["a" * 8], "source"))
    other = resolve_task("softmax")
    assert prop.run_key(other, _ctx(first)) != k1


def _learn(findings_child=(), findings_parent=(), child_verdict="correct"):
    task = resolve_task("layernorm")
    memory = MemoryStore(":memory:")
    prop = HierarchicalProposer(StubBackend(), memory=memory)
    tree = CandidateTree([rec("a", sources=GRAPH, speedup=0.25, findings=list(findings_parent) or ["x"]),
                          rec("b", "schedule", ("a",), speedup=0.5, verdict=child_verdict,
                              findings=list(findings_child) or ["y"])])
    prop._last_task, prop._last_run_key = task, "run-1"
    memory.add_attempt("run-1", Attempt("a" * 8, "schedule", "schedule-agent", "proposed",
                                        "parallel rows", child="b" * 8, before="", after="sch.parallel(i)\n"))
    return memory, prop.learn(tree, task)


def test_skills_only_from_trusted_verified_timings():
    _memory, learned = _learn()
    assert [(s.level, s.backend, round(s.speedup, 3)) for s in learned] == [("schedule", "tvm-llvm", 2.0)]
    for bad in ({"findings_child": ["untrusted timing: noisy after 2 re-timing(s)"]},
                {"findings_parent": ["untrusted timing: noisy after 2 re-timing(s)"]},
                {"findings_child": ["overhead-dominated: under 1e+05 FLOP and 16 KiB"]}):
        assert _learn(**bad)[1] == [], bad


def test_prompts_show_only_skills_of_their_level_and_backend_from_earlier_runs():
    memory = MemoryStore(":memory:")
    common = dict(task="layernorm", category="norm", search_text="norm layernorm layer_norm", speedup=1.5)
    memory.add_skill(Skill(backend="tvm-llvm", level="schedule", after="sch.parallel(i)\n",
                           description="a schedule skill", run="old", **common))
    memory.add_skill(Skill(backend="tvm-llvm", level="source", after="; ir\n", description="a source skill",
                           run="old", **common))
    memory.add_skill(Skill(backend="triton", level="source", after="tl.load\n", description="a triton skill",
                           run="old", **common))
    memory.add_skill(Skill(backend="tvm-llvm", level="source", after="; mine\n", description="this run's own",
                           run="now", **common))
    got = [s.description for _, s in memory.similar("norm layernorm", category="norm", backend="tvm-llvm",
                                                    level="source", same_level=True, same_backend=True,
                                                    exclude_run="now")]
    assert got == ["a source skill"]

    task = resolve_task("layernorm")
    prop = HierarchicalProposer(StubBackend(), memory=memory)
    tree = CandidateTree([rec("a", sources={**GRAPH, "source": "; ir\n"})])
    ctx = SimpleNamespace(backend="tvm-llvm", seed=0, tree=tree)
    text = prop.knowledge(task, ctx, tree["a" * 8], "source", None)
    assert "a source skill" in text and "a schedule skill" not in text and "a triton skill" not in text
