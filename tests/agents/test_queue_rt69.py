"""Queue round rt69 (an engineer as the model behind ``--llm queue:DIR``, from
the prompts alone): what the prompts lacked or what went wrong after an
answer, rendered through the agents' own path and asserted fixed now."""

from __future__ import annotations

import re

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import LevelAgent
from kstrata.agents.llm_agent import LLMProposer
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

LEVELS = ("graph", "schedule", "source")


@pytest.fixture(scope="module")
def softmax_ir():
    """kstrata's tvm-llvm ``source`` level of softmax's shipped start: TVM's LLVM IR with its run header."""
    pytest.importorskip("tvm")
    from kstrata.backends.registry import get_backend

    backend, task = get_backend("tvm-llvm"), resolve_task("softmax")
    sources = backend.initial_sources(task)
    return backend, task, {**sources, "source": backend.generate_source(task, sources, dict(task.nominal_shape))}


def _source_prompt_and_child(backend, task, sources, answer, hierarchical=False):
    root = rec("a", sources=sources)
    tree = CandidateTree([root])
    ctx = ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree)
    provider = ScriptedProvider([answer])
    if hierarchical:
        agent = LevelAgent(provider, NoLog(), "source")
        proposals, problems = agent.run(task, sources, tree["a" * 8].feedback(), "source", ctx, (), "",
                                        candidate=tree["a" * 8], backend=StubBackend())
    else:
        batch = LLMProposer(provider, NoLog(), backend=StubBackend()).propose(
            task, tree["a" * 8], tree["a" * 8].feedback(), "source", context=ctx)
        proposals, problems = batch.proposals, batch.problems
    assert proposals, problems
    return provider.prompts[0][1]["content"], proposals[0].sources


@pytest.mark.parametrize("hierarchical", [False, True], ids=["llm", "hierarchical"])
def test_the_llvm_source_prompt_shows_the_ir_without_its_debug_metadata(softmax_ir, hierarchical):
    """rt58, rt63, rt66 left open: the tvm-llvm source prompt's IR was about
    half debug metadata (``!dbg`` on every instruction, ``#dbg_value``
    records, ``!DILocalVariable`` nodes). The prompt shows it without them;
    an edit copied from the shown text applies, and the IR it makes still
    compiles and computes softmax."""
    import torch

    backend, task, sources = softmax_ir
    assert "!dbg" in sources["source"] and "DILocalVariable" in sources["source"]
    shown_line = next(ln for ln in sources["source"].splitlines() if "@llvm.exp.f32(float %" in ln)
    clean = re.sub(r",\s*!dbg\s+!\d+", "", shown_line)
    answer = f"Same code (a probe of the edit path).\n\n<<<<<<< SEARCH\n{clean}\n=======\n{clean}  ; kept\n>>>>>>> REPLACE\n"
    prompt, child = _source_prompt_and_child(backend, task, sources, answer, hierarchical)
    body = prompt.split("## Level `source`: the text you edit", 1)[1].split("# Feedback", 1)[0]
    for marker in ("!dbg", "#dbg_value", "!DILocalVariable", "!DISubprogram", "!llvm.dbg.cu"):
        assert marker not in body, marker
    assert "@softmax_compute_" in body and "llvm.exp" in body and "!prof" in body
    assert len(body) < 0.9 * len(sources["source"])
    assert "!dbg" not in child["source"] and "; kept" in child["source"]

    shape = {"B": 5, "D": 77}
    x = torch.randn(5, 77)
    fn = backend.load(task, {"source": child["source"]}, shape, [])
    (y,) = fn(x) if isinstance(fn(x), (tuple, list)) else (fn(x),)
    torch.testing.assert_close(y, torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6)


def test_strip_llvm_debug_leaves_ir_unchanged_where_kept_metadata_needs_debug_nodes():
    """A loop's metadata that names a ``!DILocation`` keeps the debug nodes
    alive: the text is returned as it was, not cut into IR LLVM rejects."""
    from kstrata.agents.llvm_debug import strip_llvm_debug

    ir = ("define void @f() !dbg !3 {\n  br label %l, !dbg !5, !llvm.loop !6\nl:\n  ret void, !dbg !5\n}\n"
          "!llvm.dbg.cu = !{!0}\n!0 = distinct !DICompileUnit(language: DW_LANG_C, file: !1)\n"
          "!1 = !DIFile(filename: \"a\", directory: \".\")\n!3 = distinct !DISubprogram(name: \"f\", unit: !0)\n"
          "!5 = !DILocation(line: 1, scope: !3)\n!6 = distinct !{!6, !5}\n")
    assert strip_llvm_debug(ir) == ir
    plain = ir.replace(", !llvm.loop !6", "").replace("!6 = distinct !{!6, !5}\n", "")
    out = strip_llvm_debug(plain)
    assert "!dbg" not in out and "!DI" not in out and "define void @f() {" in out
    # a string constant that spells an attachment is text, not an attachment
    s = '@s = private constant [10 x i8] c", !dbg !5\\00"\n'
    assert s.strip() in strip_llvm_debug(s + plain)


@pytest.mark.parametrize("calls, told", [(1, True), (2, False), (None, False)])
def test_the_runs_last_call_says_an_unusable_answer_gets_no_retry(calls, told):
    """rt63 and rt66 left open: an edit whose SEARCH text did not occur, sent
    on a run's last call, was recorded unusable and no retry prompt came (a
    retry is a call; the budget is a hard limit). The last call's prompt now
    says so, and how to avoid it; earlier calls' prompts do not."""
    task = resolve_task("mean_dim")
    tree = CandidateTree([rec("a", sources={"source": "BLOCK_D = 128\n"}, backend="triton-interp")])

    class Interp:
        name, levels, timing_meaningful = "triton-interp", ("source",), False

        def level_context(self, task, sources, level):
            return {}

    wrong = "Wider blocks.\n\n<<<<<<< SEARCH\nBLOCK_D = 64\n=======\nBLOCK_D = 256\n>>>>>>> REPLACE\n"
    provider = ScriptedProvider([wrong, wrong])
    ctx = ProposeContext(backend="triton-interp", levels=("source",), tree=tree, budget_left={"proposer_calls": calls})
    batch = LLMProposer(provider, NoLog(), backend=Interp()).propose(task, tree["a" * 8], tree["a" * 8].feedback(),
                                                                     "source", context=ctx)
    assert not batch.proposals and "edit_no_match" in batch.problems[0]
    first = provider.prompts[0][-1]["content"]
    assert ("# This is the run's last call" in first) is told
    assert len(provider.prompts) == (1 if told else 2)  # the retry came where the budget had a call for it
    if told:
        assert "gets no second prompt" in first and "send the complete new text in one code block" in first


def test_a_single_agents_request_to_the_source_level_is_routed_there():
    """silu on tvm-llvm, --proposer llm, --initial with the generated IR as
    `source`: the graph answer declined with "CROSS-LEVEL REQUEST: source:
    ...", and the next prompt went to the schedule level. The loop's tree is
    read without sources, so the router took the start for one without
    source text (TVM's source exists only once given) and left the requested
    level out; the policy already knew it from the proposer's own record, as
    the hierarchical proposer's router does."""
    from agent_fakes import declined_expansion

    from kstrata.agents.router import Declined

    task = resolve_task("silu")
    full = CandidateTree([rec("a", sources={"graph": "# g\n", "schedule": "# s\n", "source": "; ir\n"})])
    answer = ("DECLINE\nDIAGNOSIS: one fused PrimFunc already\n"
              "CROSS-LEVEL REQUEST: source: a vector exp in the sigmoid loop\n")
    prop = LLMProposer(ScriptedProvider([answer]), NoLog(), backend=StubBackend())
    with pytest.raises(Declined) as d:
        prop.propose(task, full["a" * 8], full["a" * 8].feedback(), "graph",
                     context=ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=full))
    # the loop's view: the same start, read without its sources, and the decline stored with its expansion
    loop = CandidateTree([rec("a")], [declined_expansion("a", "graph", "single", d.value.record["diagnosis"],
                                                         d.value.record["requests"], 1)])
    level, reason = prop.router(loop, loop["a" * 8], ["schedule", "source"], LEVELS)
    assert level == "source" and "a vector exp" in reason, reason


def test_a_not_judged_candidates_goal_does_not_ask_to_make_it_correct_first():
    """silu on tvm-llvm (run5): the judge's own process failed on the start
    (an evaluator_exception); the prompt said "NOT JUDGED ... says nothing
    about whether this code is right or wrong" and then, under Goal, "Make
    this candidate correct first (the verdict above says why it is not)"
    (rt63's P7.1 met the same after a protocol fault). The goal now says the
    code is not known to need a fix."""
    from kstrata.agents.router import Declined
    from kstrata.store.records import EvaluationRecord

    task = resolve_task("silu")
    root = rec("a", sources={"graph": "# kstrata-tvm graph\n", "schedule": "# s\n"}, verdict="runtime_error")
    root.evaluation = EvaluationRecord(verdict="runtime_error", check="evaluator_exception",
                                       evidence={"error": "VerifierError: kstrata verifier failed on silu/tvm-llvm"},
                                       feedback=[{"level": None, "message": "evaluation failed: VerifierError"}])
    tree = CandidateTree([root])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog(), backend=StubBackend()).propose(
            task, tree["a" * 8], tree["a" * 8].feedback(), "schedule",
            context=ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree))
    text = provider.prompts[0][1]["content"]
    assert "- NOT JUDGED: the judge itself failed on this candidate" in text
    goal = text.split("# Goal", 1)[1]
    assert "Make this candidate correct first" not in goal
    assert "neither known wrong nor known right" in goal and "Make the change you would make to a correct" in goal


def test_a_failed_ir_edits_diff_is_from_the_ir_the_agent_was_shown(softmax_ir):
    """After dbf8dcb the source agent edits the IR without debug metadata, but
    the next prompt's "The change that failed" diff was taken from the
    candidate's stored IR (with it): every `, !dbg !N` line read as changed,
    and the one edited line was lost among them. The diff is from the text
    the agent was shown."""
    from kstrata.agents.llvm_debug import strip_llvm_debug
    from kstrata.agents.router import Declined
    from kstrata.search.candidate import content_hash, normalize_sources
    from kstrata.store.records import EvaluationRecord

    backend, task, sources = softmax_ir
    shown = strip_llvm_debug(sources["source"])
    line = next(ln for ln in shown.splitlines() if "@llvm.exp.f32(float %" in ln)
    bad = shown.replace(line, line.replace("@llvm.exp.f32", "@llvm.fastexp.f32"))
    root = rec("a", sources=sources)
    child = rec("x", "source", ("a",), sources={}, verdict="compile_error", expansion_id=1, rationale="fast exp")
    child.hash = content_hash(normalize_sources({**sources, "source": bad}), "tvm-llvm", task.digest)
    child.evaluation = EvaluationRecord(verdict="compile_error", check="load", evidence={
        "message": "LLVM rejected the IR: line 9, column 33: unknown intrinsic 'llvm.fastexp.f32'"})
    tree = CandidateTree([root, child])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    prop = LLMProposer(provider, NoLog(), backend=StubBackend())
    prop._proposed[child.hash] = bad
    with pytest.raises(Declined):
        prop.propose(task, tree["a" * 8], tree["a" * 8].feedback(), "source",
                     context=ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree))
    text = provider.prompts[0][1]["content"]
    diff = text.split("The change that failed (a diff from the current text above):", 1)[1].split("```diff\n", 1)[1]
    diff = diff.split("```", 1)[0]
    changed = [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    assert changed == ["-" + line, "+" + line.replace("@llvm.exp.f32", "@llvm.fastexp.f32")], changed


def test_a_remembered_ir_edit_is_from_the_ir_the_role_was_shown(softmax_ir):
    """The hierarchical proposer stores each attempt's before/after texts (the
    memory's lessons and skills show their diff): a tvm-llvm source edit's
    `before` was the stored IR with its debug metadata, so the lesson's diff
    was every `, !dbg !N` line. It is the text the role was shown."""
    from kstrata.agents.hierarchical import HierarchicalProposer
    from kstrata.agents.llvm_debug import editable_text
    from kstrata.agents.memory import MemoryStore

    backend, task, sources = softmax_ir
    shown = editable_text("tvm-llvm", "source", sources["source"])  # no debug metadata, folded (rt72)
    line = next(ln for ln in shown.splitlines() if "@llvm.exp.f32(float %" in ln)
    answer = f"Probe.\n\n<<<<<<< SEARCH\n{line}\n=======\n{line}  ; kept\n>>>>>>> REPLACE\n"
    tree = CandidateTree([rec("a", sources=sources)])
    memory = MemoryStore(":memory:")
    prop = HierarchicalProposer(StubBackend(), agents={"source": LevelAgent(ScriptedProvider([answer]), NoLog(),
                                                                             "source")}, memory=memory)
    ctx = ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree, budget_left={"proposer_calls": 4})
    batch = prop.propose(task, tree["a" * 8], {}, "source", context=ctx)
    assert batch.proposals, batch.problems
    (attempt,) = [a for a in memory.attempts(prop.run_key(task, ctx)) if a.outcome == "proposed"]
    assert attempt.before == shown and "!dbg" not in attempt.before and "; kept" in attempt.after
