"""Queue round rt63 (an engineer as the model behind ``--llm queue:DIR``, from
the prompts alone): what the prompts lacked or said wrongly, rendered through
the agents' own path and asserted present now."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.router import Declined
from kstrata.backends.registry import get_backend
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task


def _tilelang_c_prompt(level: str, task: str = "max_dim", **kw) -> str:
    backend = get_backend("tilelang-c")
    # the shipped start of the task, as optimize begins from it
    root = rec("a", sources=backend.initial_sources(resolve_task(task)), backend="tilelang-c", **kw)
    tree = CandidateTree([root])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    prop = LLMProposer(provider, NoLog(), backend=backend)
    with pytest.raises(Declined):
        prop.propose(resolve_task(task), tree["a" * 8], tree["a" * 8].feedback(), level,
                     context=ProposeContext(backend="tilelang-c", levels=backend.levels, tree=tree))
    return provider.prompts[0][1]["content"]


def test_tilelang_c_source_prompt_says_t_max_does_not_compile_in_t_vectorized():
    """max_dim on tilelang-c: the sheet said `T.max`/`T.min` lower in
    `T.vectorized`; the answer that followed it failed to compile (g++: no
    operator> for float4). The source prompt now says so and what works."""
    text = _tilelang_c_prompt("source")
    assert "`T.max` and `T.min` inside `T.vectorized` do not compile on this target" in text
    assert "no match for 'operator>'" in text and "`T.serial` loop of constant extent" in text
    assert "(`+ - * /`, `T.max`, `T.min`) lower" not in text
