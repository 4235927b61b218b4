"""What a TVM prompt says about its target, per target (queue round of
2026-12-05 on ``tvm-opencl``): the prompt's Target section was empty ("Target:
tvm-opencl on the target device", no line under it), the graph sheet told the
`build` header to choose one symbolic build though OpenCL builds every shape
static, and the current graph's `# fusion: rows` (the GPU targets' default) was
not among the fusion values the sheet listed."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.memory import MemoryStore
from kstrata.agents.prompt import api_sheet
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

GRAPH = "# kstrata-tvm graph\n# fusion: rows\n# build: symbolic\n"
SCHEDULE = "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"


class Stub:
    """A TVM backend of the given name as the agents see it, without lowering."""

    levels = ("graph", "schedule", "source")

    def __init__(self, name):
        self.name = name

    def level_context(self, task, sources, level):
        return {}


def _prompt(backend: str, level: str) -> str:
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: just looking"])
    b = Stub(backend)
    prop = HierarchicalProposer(b, agents={level: LevelAgent(provider, NoLog(), level)},
                                memory=MemoryStore(":memory:"))
    root = rec("a", sources={"graph": GRAPH, "schedule": SCHEDULE}, speedup=1.0, backend=backend)
    tree = CandidateTree([root])
    node = tree[root.hash]
    try:
        prop.propose(resolve_task("softmax"), node, node.feedback(), level,
                     context=ProposeContext(backend=backend, levels=b.levels, tree=tree))
    except Exception:  # noqa: BLE001 - the scripted decline
        pass
    return provider.prompts[0][1]["content"]


def _target_section(user: str) -> list[str]:
    lines = user.split("# Target: ", 1)[1].split("\n# ", 1)[0].splitlines()
    return [ln for ln in lines[1:] if ln.strip()]


@pytest.mark.parametrize("backend", ["tvm-llvm", "tvm-opencl"])
def test_the_target_section_describes_the_device(backend):
    user = _prompt(backend, "schedule")
    assert "on the target device" not in user
    lines = _target_section(user)
    assert any(ln.startswith("- vector_bits: ") for ln in lines), lines
    assert any(ln.startswith("- kind: cpu") for ln in lines), lines


def test_the_opencl_target_says_how_pocl_runs_work_groups_on_the_cpu():
    lines = _target_section(_prompt("tvm-opencl", "schedule"))
    opencl = [ln for ln in lines if ln.startswith("- opencl: ")]
    assert opencl and "PoCL" in opencl[0] and "work-group" in opencl[0] and "work-item" in opencl[0], lines


def test_every_fusion_value_the_graph_header_takes_is_documented():
    from kstrata.backends.tvm.lower import FUSION_CHOICES

    sheet = api_sheet("tvm-llvm", "graph")
    fusion_line = next(ln for ln in sheet.splitlines() if ln.startswith("- `# fusion: "))
    for value in FUSION_CHOICES:
        assert f"`{value}`" in fusion_line or f"`# fusion: {value}`" in fusion_line, (value, fusion_line)


@pytest.mark.parametrize("backend", ["tvm-opencl", "tvm-cuda"])
def test_targets_that_build_every_shape_static_say_the_build_header_is_not_read(backend):
    graph = api_sheet(backend, "graph")
    schedule = api_sheet(backend, "schedule")
    assert f"On `{backend}` this line is not read: every shape is built static" in graph
    assert f"On `{backend}` every shape is built static" in schedule
    assert "(graph header) the schedule is applied to the symbolic PrimFunc" not in schedule


def test_llvm_keeps_the_symbolic_build_notes():
    assert "is not read" not in api_sheet("tvm-llvm", "graph")
    assert "(graph header) the schedule is applied to the symbolic PrimFunc" in api_sheet("tvm-llvm", "schedule")


@pytest.mark.parametrize("backend", ["tvm-cuda", "tvm-opencl", "tvm-llvm"])
def test_a_gpu_schedule_sheet_names_the_size_one_guard_that_is_in_scope(backend):
    """The verifier's size-1 tests made every built-in tvm-cuda variant of cross_entropy a
    compile error (the unit loops dropped); a GPU sheet tells the guard the namespace has."""
    from kstrata.backends.tvm.schedule import _namespace

    user = _prompt(backend, "schedule")
    gpu = backend != "tvm-llvm"
    assert ("if not unit_reductions(sch):" in user) == gpu
    assert "unit_reductions" in _namespace(None)  # what the sheet names is there when it runs
