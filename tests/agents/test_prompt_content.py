"""What each role's prompt carries for a suite task (issue 19): the code at its
level with the names it must use, the toolchain and its API sheet, numbers at
the shape actually timed with their trust, located feedback, this run's
history with the agents' reasons; and nothing it does not need."""

from __future__ import annotations

from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.memory import MemoryStore
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

UNTRUSTED = ("untrusted timing: the timing stayed noisy (relative IQR over the threshold) after 2 "
             "re-timing(s); not ranked as a speedup (re-time it on a quiet machine)")
FIT = {"B": 64, "D": 512}


def _prompt(backend, level, candidate_rec, *others, answer="DECLINE\nDIAGNOSIS: just looking"):
    task = resolve_task("layernorm")
    provider = ScriptedProvider([answer])
    prop = HierarchicalProposer(backend, agents={level: LevelAgent(provider, NoLog(), level)},
                                memory=MemoryStore(":memory:"))
    tree = CandidateTree([*others, candidate_rec])
    node = tree[candidate_rec.hash]
    ctx = ProposeContext(backend=backend.name, levels=backend.levels, tree=tree)
    try:
        prop.propose(task, node, node.feedback(), level, context=ctx)
    except Exception:  # noqa: BLE001 - the scripted decline
        pass
    system, user = provider.prompts[0]
    return system["content"], user["content"]


def test_schedule_role_sees_tensorir_names_api_sheet_timed_shape_and_trust():
    from kstrata.backends.registry import get_backend

    backend = get_backend("tvm-llvm")
    task = resolve_task("layernorm")
    sources = backend.initial_sources(task)
    root = rec("a", sources=sources, speedup=0.32, shape={**FIT, "EPS": 1e-5}, findings=[UNTRUSTED])
    system, user = _prompt(backend, "schedule", root)
    # the code at its level with the names it must use: TensorIR made in the sandbox
    assert "The graph lowers to these PrimFuncs" in user and 'T.sblock("' in user
    assert "sch.get_sblock" in user and "not `get_block`" in user and "TVM 0.27" in user + system
    # the shape actually timed, and its trust
    assert "timed shape: B=64, D=512 (every time, speedup and roofline below is at this shape" in user
    assert "the task's nominal shape is B=4096, D=4096" in user
    assert "ms (median, at the timed shape B=64, D=512); NOT TRUSTED" in user and "(untrusted)" in user
    assert "profiler: " + UNTRUSTED in user
    # no PyTorch/Triton boilerplate, no stray fences or typos
    for absent in ("no_torch_compute", "tl.dot", "record_stream", "current source source", "```llvm"):
        assert absent not in system + user, absent
    assert "CROSS-LEVEL REQUEST: <graph>" in system and "source|" not in system


def test_graph_role_sees_what_its_graph_lowers_to_and_its_header():
    from kstrata.backends.registry import get_backend

    backend = get_backend("tvm-llvm")
    task = resolve_task("layernorm")
    root = rec("a", sources=backend.initial_sources(task), verdict="incorrect",
               feedback=[{"kind": "hidden_failure", "level": "graph", "text": "a hidden test fails"}])
    _system, user = _prompt(backend, "graph", root)
    assert "What this graph lowers to (" in user and "PrimFunc(s)" in user and "intermediate" in user
    assert "# PrimFunc " in user and "`# build: symbolic`" in user and "`static`" in user
    assert "[hidden_failure, likely at level graph] a hidden test fails" in user


def test_source_role_sees_the_generated_source_format():
    src = "; kstrata-tvm source target=llvm shape=symbolic\n; kstrata-plan: {}\ndefine void @f() {\n  ret void\n}\n"
    node = rec("a", sources={"graph": "# kstrata-tvm graph\n", "schedule": "def schedule(sch):\n    pass\n",
                             "source": src})
    _system, user = _prompt(StubBackend(), "source", node)
    assert "```llvm\n; kstrata-tvm source target=llvm" in user and "`kstrata-plan: {...}`" in user
    assert "```python\n# kstrata-tvm graph" in user  # other levels fenced in their own language


def test_history_carries_the_agents_own_reasons():
    why = "R.nn.layer_norm cancels on shifted inputs, so I compute the variance in two passes."
    root = rec("a", sources={"graph": "g", "schedule": "s"})
    child = rec("b", "graph", ("a",), sources={"graph": "g2", "schedule": "s"}, rationale=why + "\n\nmore")
    _, user = _prompt(StubBackend(), "schedule", child, root)
    assert f"on the path to this candidate: [graph, graph-agent] {why} -> correct" in user


def test_triton_interp_prompt_asks_for_correctness_only_and_says_why():
    from kstrata.backends.registry import get_backend

    backend = get_backend("triton-interp")
    task = resolve_task("softmax")
    node = CandidateTree([rec("a", sources=backend.initial_sources(task), backend="triton-interp")])["a" * 8]
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    prop = LLMProposer(provider, NoLog(), backend=backend)
    try:
        prop.propose(task, node, {"verdict": "correct"}, "source",
                     context=ProposeContext(backend="triton-interp", levels=("source",)))
    except Exception:  # noqa: BLE001 - the scripted decline
        pass
    system, user = provider.prompts[0][0]["content"], provider.prompts[0][1]["content"]
    assert "Make this candidate correct for every shape and input" in user
    assert "Triton's CPU interpreter" in system + user and "correctness and integrity only" in user
    assert "timed shape" not in user and "faster" not in user and "# Target: triton-interp (correctness only)" in user
    assert "Triton 3." in system and "tl.load(ptr + offs, mask=m, other=v)" in user
    assert "no_torch_compute" in system  # Python-kernel rules where they apply
