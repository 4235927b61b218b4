"""Queue round rt82 (gemv on triton-interp, --proposer llm): the shipped start timed out on a hidden test under
load, and the prompt said only "timeout (wall_clock): the candidate process did not answer before the time
limit on a hidden test" and "make this candidate correct first": nothing said that on the interpreter a test's
time follows the number of programs and the machine's load, the one thing a kernel author can act on there."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.router import Declined
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

SOURCE = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"
HIDDEN = ("the candidate process did not answer before the time limit on a hidden test (what it did is withheld: "
          "a hidden test's details stay hidden)")


def _feedback(backend: str) -> str:
    r = rec("a", sources={"source": SOURCE}, verdict="timeout", backend=backend)
    r.evaluation.check, r.evaluation.evidence = "wall_clock", {"message": HIDDEN}
    tree = CandidateTree([r])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    prop = LLMProposer(provider, NoLog(), backend=StubBackend())
    node = tree["a" * 8]
    with pytest.raises(Declined):
        prop.propose(resolve_task("gemv"), node, node.feedback(), "source",
                     context=ProposeContext(backend=backend, levels=("source",), tree=tree))
    text = provider.prompts[0][1]["content"]
    return text.split("# Feedback on the current candidate", 1)[1].split("\n# ", 1)[0]


def test_an_interpreter_timeout_says_what_its_time_follows():
    fb = _feedback("triton-interp")
    assert "timeout (wall_clock)" in fb and "did not answer before the time limit" in fb, fb
    assert "number of programs" in fb and "Fewer, larger programs" in fb and "load" in fb, fb


def test_a_compiled_backends_timeout_has_no_interpreter_note():
    assert "number of programs" not in _feedback("pytorch")
