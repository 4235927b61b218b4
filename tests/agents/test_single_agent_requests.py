"""The single agent (``--proposer llm``) keeps a CROSS-LEVEL REQUEST written
beside code, as the hierarchical proposer does (queue round rt56: an rmsnorm
graph change on tvm-llvm ended "CROSS-LEVEL REQUEST: schedule: put the rsqrt
and the output under the row loop ...", the replayed schedule had lost every
step, and the next call asked the graph level again, the request shown
nowhere)."""

from __future__ import annotations

from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.llm_agent import LLMProposer
from kstrata.search.tree import CandidateTree
from kstrata.store.records import ExpansionRecord
from kstrata.tasks.loader import resolve_task

LEVELS = ("graph", "schedule", "source")
ROOT = {"graph": "# kstrata-tvm graph\n# build: symbolic\nlv = R.power(x, 2)\n",
        "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"}
ASK = "parallelize the row loop of the fused PrimFunc and vectorize its output loop by 16"
ANSWER = (f"x * x instead of powf, one fused PrimFunc.\nCROSS-LEVEL REQUEST: schedule: {ASK}\n\n"
          "```python\n# kstrata-tvm graph\n# build: symbolic\nlv = R.multiply(x, x)\n```\n")


def test_a_request_beside_code_is_kept_and_asks_that_level_next():
    task = resolve_task("rmsnorm")
    root = rec("a", sources=ROOT)
    prop = LLMProposer(ScriptedProvider([ANSWER]), NoLog(), backend=StubBackend())
    tree = CandidateTree([root])
    ctx = ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree, budget_left={"proposer_calls": None})
    (p,) = prop.propose(task, tree["a" * 8], {}, "graph", context=ctx).proposals
    assert p.metadata.get("cross_level_request") == [{"level": "schedule", "text": ASK}], p.metadata
    # the child as the loop stores it; the router asks the requested level next, and names why
    child = rec("g", "graph", ("a",), sources=p.sources, metadata=p.metadata, expansion_id=1)
    child.seq = 1
    tree = CandidateTree([root, child], [ExpansionRecord(candidate="a" * 8, level="graph", proposer="llm", id=1)])
    level, reason = prop.router(tree, tree["g" * 8], ["graph", "schedule"], LEVELS)
    assert level == "schedule" and "cross-level request" in reason, reason
