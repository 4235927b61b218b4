"""A prompt says each thing once, in the words of its backend, and never
asks for what cannot be done (queue round 3: a person answered the prompts of
softmax on triton-interp, layernorm on tvm-llvm (hierarchical, and a rerun
with the same memory) and fused_exp_mean on tilelang-c)."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, declined_expansion, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.exemplars import exemplars_for
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.memory import Attempt, MemoryStore
from kstrata.agents.prompt import (Feedback, PromptContext, TaskContract, api_sheet, build_prompt,
                                   integrity_rules, retry_messages)
from kstrata.agents.router import Declined
from kstrata.agents.run_history import verified_scope
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.search.tree import CandidateTree
from kstrata.store.records import EvaluationRecord
from kstrata.tasks.loader import resolve_task

LEVELS = ("graph", "schedule", "source")
ROOT = {"graph": "# kstrata-tvm graph\n# build: symbolic\n",
        "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"}
UNTRUSTED = "untrusted timing: contended: other processes kept 1.59 of 2 CPUs busy during this timing"


def _ctx(tree):
    return ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree)


def _ask(tree, node, level, answers=("DECLINE\nDIAGNOSIS: looking",), task="softmax"):
    """The prompts an LLM proposer sends for ``node`` at ``level`` (it declines at the end)."""
    provider = ScriptedProvider(list(answers))
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog(), backend=StubBackend()).propose(
            resolve_task(task), tree[node * 8], tree[node * 8].feedback(), level, context=_ctx(tree))
    return provider.prompts


def test_the_feedback_lines_are_one_list():
    """A blank line stood between the time and the profiler lines of every timed prompt."""
    tree = CandidateTree([rec("a", sources=ROOT, speedup=1.29, findings=[UNTRUSTED])])
    user = _ask(tree, "a", "schedule")[0][1]["content"]
    feedback = user.split("# Feedback on the current candidate\n", 1)[1].split("\n\n", 1)[0]
    assert feedback.startswith("- verdict: correct\n- speedup vs eager: 1.29x")
    assert "\n- time: 1 ms (median" in feedback and "\n- profiler: untrusted timing: contended" in feedback


def test_the_schedule_scope_is_a_paragraph_of_its_own():
    tree = CandidateTree([rec("a", sources=ROOT, speedup=1.0)])
    user = _ask(tree, "a", "schedule")[0][1]["content"]
    assert "do not change what is computed.\n\nChange only the `schedule` level" in user


def _role_prompt(backend, other_roles, level="source"):
    task = resolve_task("fused_exp_mean")
    ctx = PromptContext(task=TaskContract.from_task(task), backend=backend, level=level, role=level,
                        sources={"source": "import tilelang\n"}, feedback=Feedback(verdict="correct"),
                        decline=True, other_roles=other_roles, goal={"correct": True, "speedup": 0.5,
                                                                     "trusted": False, "best": "",
                                                                     "roofline": None, "verified": None})
    system, user = (m["content"] for m in build_prompt(ctx))
    return system, user


def test_a_role_with_no_other_level_to_ask_is_not_told_of_other_agents():
    """tilelang-c, hierarchical: the system message said "no CROSS-LEVEL
    REQUEST line", the user message "the other levels are handled by other
    agents" and "decline ... and name the level that can"."""
    system, user = _role_prompt("tilelang-c", ())
    assert "(No other level of this candidate can be edited now: no CROSS-LEVEL REQUEST line.)" in system
    assert "handled by other agents" not in user and "name the level that can" not in user
    assert "no other level of this candidate can be edited now" in user
    assert "If no source-level change can help, decline (answer format 3)." in user
    # where another level can be asked, both are said
    system, user = _role_prompt("tvm-llvm", ("graph",), level="schedule")
    assert "CROSS-LEVEL REQUEST: <graph>:" in system and "No other level" not in system
    assert "the other levels are handled by other agents" in user and "and name the level that can." in user


@pytest.mark.parametrize("others", [(), ("graph",)])
def test_a_format_retry_asks_for_a_request_line_only_where_one_can_be_made(others):
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    text = retry_messages(msgs, "prose", "no code block", "source", decline=True, other_roles=others)[-1]["content"]
    assert "or decline, with a DIAGNOSIS" in text
    assert ("CROSS-LEVEL REQUEST" in text) is bool(others)


def test_tilelang_integrity_rules_speak_of_tilelang_not_triton():
    """A TileLang prompt read "imports only torch, triton" and "tl.dot without input_precision"."""
    tile = dict(r.split(": ", 1) for r in integrity_rules("tilelang-c"))
    triton = dict(r.split(": ", 1) for r in integrity_rules("triton-interp"))
    assert tile.keys() == triton.keys()  # the same checks, only reworded
    assert tile["no_foreign_libraries"].startswith("imports only torch, tilelang and small standard-library")
    assert "tl.dot" not in tile["no_precision_downgrade"] and "tl.dot" in triton["no_precision_downgrade"]
    assert triton["no_foreign_libraries"].startswith("imports only torch, triton")


def test_the_unverified_nominal_shape_is_a_sentence_with_the_prompts_shape_words():
    """"... keep every size and input draw of the task correct. the nominal
    shape {'B': 4096, 'D': 4096} was not verified" (the judge's evidence as it was)."""
    node = rec("a", sources={"source": "import triton\n"}, backend="triton-interp")
    node.evaluation = EvaluationRecord(verdict="correct", evidence={
        "message": "54 public and 138 hidden tests pass",
        "scope": "small: 1 of the task's 2 sweep shapes were not tested ({'B': 17, 'D': 65537})",
        "nominal_shape": "the nominal shape {'B': 4096, 'D': 4096} was not verified: triton-interp interprets"})
    out = verified_scope(CandidateTree([node])["a" * 8])
    assert out["nominal"].startswith("The nominal shape B=4096, D=4096 was not verified")
    assert out["scope"] == "small: 1 of the task's 2 sweep shapes were not tested (B=17, D=65537)"


def test_a_child_and_a_decline_are_said_once():
    """The graph agent's decline stood under the open requests, under "What the
    other levels' roles did" and in the history; a child under "Asked again"
    and in the history."""
    ask = "unroll the two 16-lane final sums"
    child = rec("b", "schedule", ("a",), rationale="parallelize the rows of layer_norm_rows", speedup=1.1,
                expansion_id=1)
    tree = CandidateTree([rec("a", sources=ROOT, speedup=1.0), child],
                         [declined_expansion("a", "graph", "graph", "the graph reads x once per row",
                                             [{"level": "schedule", "text": ask}], 2)])
    user = _ask(tree, "a", "schedule")[0][1]["content"]
    assert user.count("parallelize the rows of layer_norm_rows") == 1  # "Asked again" only
    assert user.count("the graph reads x once per row") == 1  # the open request only
    assert "declined its level (the graph reads x once per row) and asked: " + ask in user
    assert "from this candidate:" not in user


def test_another_levels_decline_without_an_open_request_is_still_context():
    tree = CandidateTree([rec("a", sources=ROOT, speedup=1.0)],
                         [declined_expansion("a", "graph", "graph", "the graph reads x once per row", [], 1)])
    user = _ask(tree, "a", "schedule")[0][1]["content"]
    assert "# What the other levels' roles did with this candidate" in user
    assert "- DECLINED [graph, graph-agent]: the graph reads x once per row" in user


def test_the_hierarchical_history_keeps_unusable_answers_but_not_declines(tmp_path):
    memory = MemoryStore(tmp_path / "m.db")
    prop = HierarchicalProposer(StubBackend(), memory=memory)
    tree = CandidateTree([rec("a", sources=ROOT)])
    key = prop.run_key(resolve_task("layernorm"), ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree))
    memory.add_attempt(key, Attempt("a" * 8, "source", "source-agent", "parse_error", reason="no code block"))
    memory.add_attempt(key, Attempt("a" * 8, "graph", "graph-agent", "declined", "fused already", "asks schedule"))
    lines = prop.history(key, tree, tree["a" * 8], "schedule")
    assert any("no code block" in h for h in lines) and not any("fused already" in h for h in lines)


def test_an_exemplar_the_candidate_already_is_not_shown_again():
    """The graph prompt after the model adopted the norm exemplar showed that
    exemplar's 100 lines again, as advice, beside the same text as the candidate."""
    task = resolve_task("layernorm")
    (ex, *_) = [e for e in exemplars_for("norm", "tvm-llvm", "graph") if "layer_norm_rows" in e.code]
    prop = HierarchicalProposer(StubBackend(), agents={}, memory=None)
    for graph, shown in ((ex.code, False), (ROOT["graph"], True)):
        tree = CandidateTree([rec("a", sources={**ROOT, "graph": graph})])
        text = prop.knowledge(task, _ctx(tree), tree["a" * 8], "graph", None)
        assert ("layer_norm_rows" in text) is shown


@pytest.mark.parametrize("kind", ["llm", "hierarchical"])
def test_an_answer_that_repeats_a_candidate_of_the_run_is_answered_with_which(kind):
    """tilelang-c: an answer sent a sibling's exact text; the loop dropped it as
    a duplicate and the same prompt came again, with no word of why."""
    task = resolve_task("softmax")
    answer = ("Parallelize the rows.\n\n```python\n# kstrata-tvm schedule\n\n\ndef schedule_softmax(sch):\n"
              "    sch.parallel(sch.get_loops(sch.get_sblock(\"T_softmax_norm\"))[0])\n```\n")
    new = {**ROOT, "schedule": answer.split("```python\n", 1)[1].split("```", 1)[0]}
    sibling = rec("c", "schedule", ("a",), sources=new, verdict="compile_error", expansion_id=1)
    sibling.hash = content_hash(normalize_sources(new), "tvm-llvm", task.digest)
    tree = CandidateTree([rec("a", sources=ROOT, speedup=1.0), sibling])
    provider = ScriptedProvider([answer, "DECLINE\nDIAGNOSIS: nothing else"])
    if kind == "llm":
        prop = LLMProposer(provider, NoLog(), backend=StubBackend())
    else:
        prop = HierarchicalProposer(StubBackend(), agents={"schedule": LevelAgent(provider, NoLog(), "schedule")},
                                    memory=MemoryStore(":memory:"))
    with pytest.raises(Declined):
        prop.propose(task, tree["a" * 8], tree["a" * 8].feedback(), "schedule", context=_ctx(tree))
    retry = provider.prompts[1][-1]["content"]
    assert f"its text is exactly candidate {sibling.hash[:8]} (made from aaaaaaaa; compile_error)" in retry
    assert "Send a different change, or decline" in retry


def test_the_api_sheets_say_what_their_text_is_for():
    sheet = api_sheet("tvm-llvm", "schedule")
    assert "lowered at the nominal shape, a PrimFunc written by hand with sizes of its own too" in sheet
    tile = api_sheet("tilelang-c", "source")
    assert "a KernelBench-format Python file for TileLang" in tile and "((" not in tile.split("\n", 1)[0]


def test_the_tilelang_c_sheet_says_how_exp_lowers():
    """fused_exp_mean on tilelang-c: nothing said what `T.exp` becomes in the C
    code; -O3 alone kept one scalar `expf` call per element (0.54x), adding
    -ffast-math gave glibc's 16-lane vector expf (3.3x to 4.8x, correct at the full scope)."""
    sheet = api_sheet("tilelang-c", "source", "torch.exp(x).mean(dim=-1)")
    assert "`T.exp` of float32 is a call of `expf` per element" in sheet and "_ZGVeN16v_expf" in sheet
    assert "expf" not in api_sheet("tilelang-c", "source", "torch.relu(x)")
    assert "expf" not in api_sheet("tilelang-cuda", "source", "torch.exp(x)")



def test_show_prints_a_profiler_finding_as_its_text_not_as_json():
    from kstrata.search.views import feedback_lines

    finding = {"confidence": 0.6, "level": "schedule", "metrics": {"achieved_gbs": 3.0, "fraction": 0.11},
               "text": "memory-bound at 11% of peak bandwidth (3.0 of 26 GB/s)"}
    lines = feedback_lines({"measurement": {"findings": ["contended", finding], "median_ms": 2.5}})
    assert lines == ["- timing: contended", "- timing: memory-bound at 11% of peak bandwidth (3.0 of 26 GB/s) "
                     "[schedule level]", "- median time: 2.5 ms"]
