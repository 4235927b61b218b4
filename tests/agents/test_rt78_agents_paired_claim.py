"""Queue round rt78 (rmsnorm on tvm-llvm, hierarchical): an untrusted timing's
speedup line said "paired (candidate and baseline timed in alternation, so load
on the machine slows both alike)" while its profiler line, two lines below,
said "contended: ... candidate and baseline were not timed alike": the prompt
claimed and denied the same thing. The pairing's claim now stands only beside a
trusted reading; an untrusted one says the pairing did not make it reliable."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.router import Declined
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

CONTENDED = ("untrusted timing: contended: other processes kept 1.80 of 2 CPUs busy during this timing, which "
             "used 2 thread(s); candidate and baseline were not timed alike (timed 3 times in the search, every "
             "timing doubtful); not ranked as a speedup: re-time it on a quiet machine (`kstrata retime RUN`)")
SOURCES = {"graph": "# kstrata-tvm graph\n", "schedule": "def schedule(sch):\n    pass\n"}


def _feedback(findings):
    tree = CandidateTree([rec("a", sources=SOURCES, speedup=1.56, findings=findings)])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    prop = LLMProposer(provider, NoLog(), backend=StubBackend())
    ctx = ProposeContext(backend="tvm-llvm", levels=("graph", "schedule"), tree=tree)
    node = tree["a" * 8]
    with pytest.raises(Declined):
        prop.propose(resolve_task("rmsnorm"), node, node.feedback(), "schedule", context=ctx)
    text = provider.prompts[0][1]["content"]
    return text.split("# Feedback on the current candidate", 1)[1].split("\n# ", 1)[0]


def test_untrusted_speedup_does_not_claim_load_slowed_both_alike():
    feedback = _feedback([CONTENDED])
    assert "were not timed alike" in feedback and "NOT TRUSTED" in feedback
    assert "slows both alike" not in feedback
    assert "timed in alternation, which did not make this reading reliable" in feedback


def test_trusted_speedup_keeps_the_pairing_claim():
    feedback = _feedback([])
    assert "so load on the machine slows both alike); trusted" in feedback
