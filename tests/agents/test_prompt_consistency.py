"""A prompt says one consistent thing and defines what it names (queue round
4: an engineer answered kstrata's prompts as the model and reported what they
lacked: a re-ask that asked for "something different" and for a fix at once,
a verifier message cut mid-word, an unnamed GPU, a promised roofline and a
promised schedule that never came, a request that vanished after a failed
answer, stale or undefined words, a CPU peak wrong for AMD, missing libm and
TileLang lowering facts)."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, declined_expansion, rec

from kstrata.agents import knowledge
from kstrata.agents.base import ProposeContext
from kstrata.agents.exemplars import all_exemplars
from kstrata.agents.hierarchical import HierarchicalProposer
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.prompt import api_sheet
from kstrata.agents.router import Declined
from kstrata.search.tree import CandidateTree
from kstrata.store.records import EvaluationRecord
from kstrata.tasks.loader import resolve_task

LEVELS = ("graph", "schedule", "source")
ROOT = {"graph": "# kstrata-tvm graph\n# build: symbolic\n",
        "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"}
CUT = ("values differ at 3 of 4096 elements of the output, the largest where the exact value is 0.0417 and the "
       "candidate's 0.0391; the rows they lie in end in a partial vector of the tail loop")


def _failed(h, parents, rationale, check, message, created, exp):
    node = rec(h, "schedule", parents, sources=ROOT, verdict="incorrect", rationale=rationale,
               expansion_id=exp, created=created)
    node.evaluation = EvaluationRecord(verdict="incorrect", check=check, evidence={"message": message})
    return node


def _user(tree, node="a", level="schedule", task="softmax"):
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog(), backend=StubBackend()).propose(
            resolve_task(task), tree[node * 8], tree[node * 8].feedback(), level,
            context=ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree))
    return provider.prompts[0]


def test_after_a_failed_answer_the_re_ask_wants_a_fix_not_a_different_idea():
    """"Propose something different (... not a small variant ...)" stood next
    to "fix what the message names" after a failed attempt."""
    ok = rec("b", "schedule", ("a",), sources=ROOT, speedup=1.1, rationale="parallelize the rows",
             expansion_id=1, created=1.0)
    bad = _failed("c", ("a",), "vectorize the row sum by 16", "values", CUT, 2.0, 2)
    tree = CandidateTree([rec("a", sources=ROOT, speedup=1.0), ok, bad])
    user = _user(tree)[1]["content"]
    assert "# Your last answer for this candidate failed" in user
    assert "a fix of that answer, however small, is what is wanted now" in user
    assert "a small fix of it that deals with what the message names is what is wanted" in user
    assert "Propose something different" not in user and "not a restatement or a small variant" not in user
    # the correct answer listed is settled: only that one calls for another idea
    assert "The answers above that were correct or declined are settled" in user
    # asked again after a correct answer only, a different idea is what is asked
    tree = CandidateTree([rec("a", sources=ROOT, speedup=1.0), ok])
    user = _user(tree)[1]["content"]
    assert "Propose something different from these (another idea" in user and "a fix of that answer" not in user


def test_an_earlier_answers_verifier_message_is_cut_at_a_boundary_and_marked():
    """"...where the exact valu: The flat kernel recomputes..." (a message cut
    mid-word, spliced into the rationale)."""
    bad = _failed("c", ("a",), "The flat kernel recomputes the max", "values", CUT, 2.0, 2)
    user = _user(CandidateTree([rec("a", sources=ROOT, speedup=1.0), bad]))[1]["content"]
    line = next(ln for ln in user.splitlines() if ln.startswith("- child cccccccc"))
    assert line == ("- child cccccccc [schedule, schedule-agent] -> incorrect (values): values differ at 3 of 4096 "
                    "elements of the output, the largest where the exact value is 0.0417 and the candidate's 0.0391; the "
                    "rows they lie in end in a (…)")
    assert "\n  its rationale: The flat kernel recomputes the max" in user
    # a long sentence that fits is kept whole up to its full stop
    sentence = "the row sums differ by 0.5 in one row of the tail loop, at a size not a multiple of 16. " + "x " * 100
    bad = _failed("c", ("a",), "r", "values", sentence, 2.0, 2)
    user = _user(CandidateTree([rec("a", sources=ROOT, speedup=1.0), bad]))[1]["content"]
    assert "-> incorrect (values): the row sums differ by 0.5 in one row of the tail loop, at a size not a multiple of 16. (…)\n" in user


def test_an_interpreted_kernels_prompt_names_the_gpu_it_is_meant_for():
    from kstrata.backends.registry import get_backend

    backend = get_backend("triton-interp")
    task = resolve_task("softmax")
    node = CandidateTree([rec("a", sources=backend.initial_sources(task), backend="triton-interp")])["a" * 8]
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog(), backend=backend).propose(
            task, node, {"verdict": "correct"}, "source", context=ProposeContext(backend="triton-interp",
                                                                                  levels=("source",)))
    system, user = (m["content"] for m in provider.prompts[0])
    h100, h200 = (knowledge.hardware_specs()[k] for k in ("nvidia-h100", "nvidia-h200"))
    target = (f"- meant for: an NVIDIA Hopper GPU (sm_90: H100/H200; {h200['sms']} SMs, {h200['smem_per_sm_kib']} KiB "
              f"shared memory per SM, {h200['l2_mib']} MiB L2, {h100['bandwidth_gbs']}-{h200['bandwidth_gbs']} GB/s "
              "memory bandwidth), kstrata's GPU target, where the compiled backend (`triton`) times it")
    assert target in user
    assert "as a kernel for the GPU it is meant for, an NVIDIA Hopper GPU (sm_90)," in user
    assert "better suited to an NVIDIA Hopper GPU (sm_90) (the GPU it is meant for, under Target above)" in user
    assert "for an NVIDIA Hopper GPU (sm_90), here only checked on a CPU" in system


def test_a_contended_timing_still_shows_the_roofline_the_shape_line_promises():
    busy = "untrusted timing: contended: other processes kept 1.59 of 2 CPUs busy during this timing"
    node = rec("a", sources=ROOT, speedup=1.2, findings=[busy], shape={"B": 64, "D": 512})
    node.measurement.roofline_fraction, node.measurement.bound = 0.031, "memory"
    user = _user(CandidateTree([node]))[1]["content"]
    assert "every time, speedup and roofline below is at this shape" in user
    assert "- roofline: 3.1% of the attainable peak, memory-bound (from the untrusted timing: a rough position" in user
    assert "at most about" not in user  # no gap is derived from a reading not believed


def test_the_schedule_role_is_shown_the_schedule_the_graph_exemplar_promises():
    ex = next(e for e in all_exemplars() if e.name == "layernorm_rows_tvm")
    prop = HierarchicalProposer(StubBackend(), agents={}, memory=None)
    task = resolve_task("layernorm")

    def knowledge_at(graph, level):
        tree = CandidateTree([rec("a", sources={**ROOT, "graph": graph})])
        ctx = ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree)
        return prop.knowledge(task, ctx, tree["a" * 8], level, None)

    graph_text = knowledge_at(ROOT["graph"], "graph")
    assert "Its schedule (the schedule level's part: the schedule role, asked after this graph change, is shown it " \
           "too where the new graph keeps the PrimFunc and block names it uses)" in graph_text
    text = knowledge_at(ex.code, "schedule")
    assert f'## Schedule for "{ex.title}" (this candidate\'s graph)\n```python\n' in text
    assert ex.schedule.strip() in text
    assert "this candidate's graph is one of them (marked), so its schedule applies as it is" in text
    # a graph with the same PrimFunc and blocks, written otherwise: shown, with a word of caution
    text = knowledge_at(ex.code.replace("# from tvm.script import ir as I", "# edited"), "schedule")
    assert ex.schedule.strip() in text and "check that their loops are the same before you reuse it" in text
    # a graph without those blocks: a schedule naming them would not apply, so none is shown
    assert ex.schedule.strip() not in knowledge_at(ROOT["graph"], "schedule")


def test_a_request_stays_open_after_the_answer_to_it_failed():
    """The graph role's request to the schedule level vanished from the re-ask
    after the schedule answer failed to compile."""
    ask = [{"level": "schedule", "text": "vectorize the lane loop of the fused PrimFunc"}]
    decline = declined_expansion("a", "graph", "graph", "the graph is fused already", ask, 1)
    bad = _failed("c", ("a",), "vectorize it", "load", "schedule_softmax line 7: no block named 'x'", 2.0, 2)
    bad.evaluation.verdict = "compile_error"
    user = _user(CandidateTree([rec("a", sources=ROOT, speedup=1.0), bad], [decline]))[1]["content"]
    assert "# Requests from other agents for this level (open until a schedule change serves them)" in user
    assert "asked: vectorize the lane loop of the fused PrimFunc" in user
    # a correct answer serves it
    ok = rec("b", "schedule", ("a",), sources=ROOT, speedup=1.1, expansion_id=3, created=3.0)
    user = _user(CandidateTree([rec("a", sources=ROOT, speedup=1.0), bad, ok], [decline]))[1]["content"]
    assert "# Requests from other agents" not in user


def test_the_rebuild_note_the_request_format_and_the_exemplars_define_their_words():
    prop = HierarchicalProposer(StubBackend(), agents={}, memory=None)
    graph_child = rec("g", "graph", ("a",), sources=ROOT, expansion_id=1,
                      metadata={"replay": {"applied": 0, "failed": [], "funcs": ["softmax_rows"],
                                           "unscheduled": ["softmax_rows"]}})
    tried = rec("s", "schedule", ("g",), sources=ROOT, verdict="compile_error", expansion_id=2)
    tree = CandidateTree([rec("a", sources=ROOT), graph_child, tried])
    node = tree["g" * 8]
    rebuild = prop._rebuild_report(node, "schedule", tree)
    text = prop.knowledge(resolve_task("softmax"), ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree),
                          node, "schedule", rebuild)
    assert "the schedule of the candidate it was made from was replayed on the new graph. That schedule had no " \
           "steps to replay; schedule the new PrimFuncs (softmax_rows)." in text
    assert "This is about the graph change only: 1 schedule answer was already made for this graph" in text
    assert "There were no schedule steps" not in text
    # the request format: the brackets are placeholders, and a concrete line shows one
    from kstrata.agents.prompt import Feedback, PromptContext, TaskContract, build_prompt

    ctx = PromptContext(task=TaskContract.from_task(resolve_task("softmax")), backend="tvm-llvm", level="schedule",
                        role="schedule", sources=ROOT, feedback=Feedback(verdict="correct"), decline=True,
                        other_roles=("graph",))
    system = build_prompt(ctx)[0]["content"]
    assert "CROSS-LEVEL REQUEST: <graph>: <what to change there and why>" in system
    assert "(The angle brackets mark what you fill in and are not typed: one level name, then your text on the " \
           "same line. For example:\nCROSS-LEVEL REQUEST: graph: fuse the max and the sum pass" in system
    # exemplars name no run or exemplar the prompt never shows
    for e in all_exemplars():
        assert "earlier exemplar" not in e.notes and "m22" not in e.notes, e.name


@pytest.mark.parametrize(("cpuinfo", "key", "fp32"), [
    ("vendor_id\t: AuthenticAMD\ncpu family\t: 25\nflags\t\t: fpu avx2 avx512f\n", "x86-avx512-zen4", 32),
    ("vendor_id\t: GenuineIntel\ncpu family\t: 6\nflags\t\t: fpu avx2 avx512f\n", "x86-avx512", 64),
])
def test_the_cpu_peak_follows_the_vendor(monkeypatch, cpuinfo, key, fp32):
    """An AMD EPYC (Zen 4) host read "AVX-512 (2 FMA units) ... fp32 64": Zen 4
    runs AVX-512 as two 256-bit halves, 32 fp32 FLOP per cycle."""
    monkeypatch.delenv("KSTRATA_CPU_SPEC", raising=False)
    monkeypatch.setattr(knowledge, "_cpuinfo", lambda: cpuinfo)
    spec = knowledge.spec_for_backend("tvm-llvm")
    assert spec["name"] == key and spec["flops_per_cycle_per_core"]["fp32"] == fp32
    from kstrata.agents.prompt import Feedback, PromptContext, TaskContract, build_prompt

    ctx = PromptContext(task=TaskContract.from_task(resolve_task("softmax")), backend="tvm-llvm", level="schedule",
                        sources=ROOT, feedback=Feedback(verdict="correct"), hardware=spec)
    user = build_prompt(ctx)[1]["content"]
    assert f"# Target: tvm-llvm on {key}\n" in user and f"fp32 {fp32}, " in user
    if key.endswith("zen4"):
        assert "two 256-bit halves" in user and "512-bit FMA" not in user
    else:
        assert "a peak estimate" in user and "AMD Zen 4 (AVX-512 as two 256-bit halves), reach half" in user


def test_the_libm_list_has_pow_and_tilelang_c_warns_of_math_calls_in_vectorized_loops():
    graph = api_sheet("tvm-llvm", "graph")
    assert "`T.log`, `T.pow`, `T.erf`" in graph and "`R.power` legalizes to `T.pow`" in graph
    assert "`log`, `pow`, `erf`" in api_sheet("tvm-llvm", "schedule")
    tile = api_sheet("tilelang-c", "source")
    assert "A math call such as `T.exp` inside `T.vectorized` does not lower on this target " \
           "(\"Unresolved call tirx.exp\"" in tile and "keep such calls in `T.serial` loops" in tile
