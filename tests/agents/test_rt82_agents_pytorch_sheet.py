"""Queue round rt82 (swiglu on pytorch, --proposer llm): the prompt had no sheet for what a PyTorch candidate
is, its "What you may change" offered "vector types and target intrinsics, launch configurations" (nothing a
PyTorch file has), and nothing said that ModelNew's parameters can be replaced after construction: the model's
answer stacked W1 and W3 once in ``__init__``, which the verifier passes (its tests never replace parameters)
and ``KernelModule.from_model`` (kstrata export) gets wrong with other weights. Triton candidates, which may
compute with torch in ``__init__`` only, are told the same."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.router import Declined
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

SOURCE = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"


def _prompt(backend: str) -> str:
    tree = CandidateTree([rec("a", sources={"source": SOURCE})])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    prop = LLMProposer(provider, NoLog(), backend=StubBackend())
    ctx = ProposeContext(backend=backend, levels=("source",), tree=tree)
    node = tree["a" * 8]
    with pytest.raises(Declined):
        prop.propose(resolve_task("swiglu"), node, node.feedback(), "source", context=ctx)
    return provider.prompts[0][1]["content"]


def test_a_pytorch_prompt_says_what_a_candidate_is_and_that_parameters_can_be_replaced():
    text = _prompt("pytorch")
    assert "# PyTorch " in text and "public torch ops are allowed" in text, text[:3000]
    assert "from_model" in text and "derive it from the parameters in `forward`" in text
    scope = text.split("# What you may change", 1)[1]
    assert "vector types" not in scope and "launch configurations" not in scope, scope
    assert "other torch ops" in scope, scope


def test_a_triton_prompt_warns_of_weights_derived_in_init():
    text = _prompt("triton-interp")
    assert "from_model" in text and "derive such a tensor in `forward`" in text
