"""Queue round rt75 (benchmarks/results/agents_queue_rt75.txt): a failure whose
message names no line is located by the innermost frame of the candidate's own
file in its traceback (a Triton InterpreterError on a shape mismatch)."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.router import Declined
from kstrata.agents.run_history import candidate_frame_line
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.search.tree import CandidateTree
from kstrata.store.records import EvaluationRecord, ExpansionRecord
from kstrata.tasks.loader import resolve_task

ROOT = {"graph": "# kstrata-tvm graph\n# build: symbolic\n",
        "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"}
BAD = ("Rows in parallel.\n\n```python\n# kstrata-tvm schedule\n\n\n"
       "def schedule_softmax(sch):\n    b = sch.get_sblock(\"T_softmax_norm\")\n"
       "    i, j = sch.get_loops(b)\n    sch.parallel(i)\n    sch.vectorize(j)\n```\n")
#: rt75 P3.3's message and the shape of its traceback (the candidate's frames, innermost last)
MESSAGE = ("candidate raised InterpreterError: ValueError('Cannot make_shape_compatible: incompatible dimensions "
           "at index 0: 4 and 512')")
TRACEBACK = ("Traceback (most recent call last):\n  File \"/x/triton/language/semantic.py\", line 807, in "
             "broadcast_impl_value\nValueError: Cannot make_shape_compatible\n\n"
             "The candidate's own frames (innermost last):\n"
             "  File \"<candidate>\", line 36, in forward\n    _rms_rows[(grid,)](x)\n"
             "  File \"<candidate>\", line 7, in _rms_rows\n    sch.parallel(i)\n")


def test_the_frame_line_is_the_innermost_candidate_frame():
    assert candidate_frame_line({"traceback": TRACEBACK}) == 7
    assert candidate_frame_line({"traceback": "Traceback ...\n  File \"/lib/x.py\", line 3\n"}) is None
    assert candidate_frame_line({"message": MESSAGE}) is None and candidate_frame_line(None) is None


def test_a_message_without_a_line_is_located_by_the_traceback():
    task = resolve_task("softmax")
    root = rec("a", sources=ROOT)
    tree = CandidateTree([root])
    provider = ScriptedProvider([BAD, "DECLINE\nDIAGNOSIS: looking"])
    prop = LLMProposer(provider, NoLog(), backend=StubBackend())
    ctx = ProposeContext(backend="tvm-llvm", levels=("graph", "schedule", "source"), tree=tree,
                         budget_left={"proposer_calls": None})
    (p,) = prop.propose(task, tree["a" * 8], {}, "schedule", context=ctx).proposals
    h = content_hash(normalize_sources(p.sources), "tvm-llvm", task.digest)
    child = rec("x", "schedule", (root.hash[0],), sources={}, verdict="runtime_error", expansion_id=1,
                rationale="Rows in parallel.")
    child.hash, child.seq = h, 1
    child.evaluation = EvaluationRecord(verdict="runtime_error", check="run",
                                        evidence={"message": MESSAGE, "traceback": TRACEBACK}, feedback=[])
    tree = CandidateTree([root, child], [ExpansionRecord(candidate="a" * 8, level="schedule", proposer="llm", id=1)])
    ctx = ProposeContext(backend="tvm-llvm", levels=("graph", "schedule", "source"), tree=tree,
                         budget_left={"proposer_calls": None})
    with pytest.raises(Declined):
        prop.propose(task, tree["a" * 8], tree["a" * 8].feedback(), "schedule", context=ctx)
    user = provider.prompts[1][1]["content"]
    assert MESSAGE in user
    assert "Line 7 of the text you sent" in user and ">> 7 |     sch.parallel(i)" in user, user[-3000:]


def test_the_triton_prompt_allows_the_tf32x3_dot_its_start_uses():
    # rt75 P4.1 (matmul_bias_relu, triton-interp): the shipped start passes input_precision="tf32x3", which the
    # static check allows, while the rule and the sheet read "tl.dot without input_precision='ieee'" / "TF32 is not
    # allowed": the start looked like a breach of an integrity rule
    from kstrata.agents.prompt import api_sheet, integrity_rules

    sheet = api_sheet("triton-interp", "source")
    assert "plain TF32, tl.dot's default, is not allowed; `\"tf32x3\"`" in sheet
    rule = next(r for r in integrity_rules("triton-interp") if r.startswith("no_precision_downgrade"))
    assert "input_precision='ieee' or 'tf32x3'" in rule, rule


def test_the_default_precision_dot_finding_names_both_allowed_precisions():
    # rt75 P4.3: "tl.dot defaults to TF32 on GPUs; pass input_precision='ieee' on a float32 task", while the
    # start it edits passes 'tf32x3' by a constexpr (allowed); the same written as a literal was rejected
    from kstrata.verify.integrity.static import static_findings

    src = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(a, b):\n"
           "    acc = tl.dot(a, b)\n    ok = tl.dot(a, b, input_precision='tf32x3')\n")
    found = [f for f in static_findings(src, dsl=True) if f.check == "no_precision_downgrade"]
    assert len(found) == 1 and "input_precision='ieee' or 'tf32x3'" in str(found[0]), found
    plain = src.replace("'tf32x3'", "'tf32'")
    assert any("input_precision='tf32' on a float32 task" in f.message for f in static_findings(plain, dsl=True))
