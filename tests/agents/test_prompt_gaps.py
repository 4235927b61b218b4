"""The gaps a model-in-the-loop trial found in the prompts (issue 19, second
round): the shape actually timed with its numbers; the model's own last
failure, located, in the next prompt for that candidate and level; no call for
a role with nothing to edit; declines in words never lost to a parse error; a
short valid example under every answer format."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import LLM_MAX_PER_LEVEL, HierarchicalProposer, LevelAgent
from kstrata.agents.llm_agent import LLMProposer, timed_shape
from kstrata.agents.memory import MemoryStore
from kstrata.agents.parse import parse_decline
from kstrata.agents.router import Declined, FeedbackRouter
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.search.tree import CandidateTree
from kstrata.store.records import EvaluationRecord, ExpansionRecord
from kstrata.tasks.loader import resolve_task

LEVELS = ("graph", "schedule", "source")
ROOT = {"graph": "# kstrata-tvm graph\n# build: symbolic\n",
        "schedule": "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"}
BAD = ("The rows run serially; parallelize them.\n\n```python\n# kstrata-tvm schedule\n\n\n"
       "def schedule_softmax(sch):\n    b = sch.get_sblock(\"T_softmax_norm\")\n"
       "    i, j = sch.get_loops(b)\n    sch.decompose_reduction(b, j)\n    sch.parallel(i)\n```\n")
MESSAGE = ("schedule_softmax line 7 `sch.decompose_reduction(b, j)` failed: ScheduleError: "
           "The block is not a reduction block")


def _ctx(tree, backend="tvm-llvm", levels=LEVELS, calls=None):
    return ProposeContext(backend=backend, levels=levels, tree=tree, budget_left={"proposer_calls": calls})


def _failed_child(parent_rec, sources, level="schedule", verdict="compile_error", check="load", message=MESSAGE):
    task = resolve_task("softmax")
    h = content_hash(normalize_sources(sources), "tvm-llvm", task.digest)
    child = rec("x", level, (parent_rec.hash[0],), sources={}, verdict=verdict, expansion_id=1,
                rationale="The rows run serially; parallelize them.")
    child.hash, child.seq = h, 1
    child.evaluation = EvaluationRecord(verdict=verdict, check=check, evidence={"message": message},
                                        feedback=[{"kind": "schedule_error", "level": "schedule",
                                                   "text": "a schedule step failed"},
                                                  {"kind": "nonfinite", "level": "source", "text": "77 NaN outputs"}])
    return child


def test_the_prompt_names_the_shape_actually_timed_with_its_work():
    """A stored measurement keeps the timings under "raw" (as the evaluator
    writes it); the prompt states that shape, not the nominal one, and the
    work of one call there."""
    task = resolve_task("softmax")
    fit = {"B": 1024, "D": 1024}
    root = rec("a", sources=ROOT, speedup=0.8, shape=fit)
    assert timed_shape(task, CandidateTree([root])["a" * 8]) == fit
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    prop = LLMProposer(provider, NoLog(), backend=StubBackend())
    tree = CandidateTree([root])
    with pytest.raises(Declined):
        prop.propose(task, tree["a" * 8], tree["a" * 8].feedback(), "schedule", context=_ctx(tree))
    user = provider.prompts[0][1]["content"]
    assert "- timed shape: B=1024, D=1024 (every time, speedup and roofline below is at this shape" in user
    assert "nominal shape is B=4096, D=4096" in user and "ms (median, at the timed shape B=1024, D=1024)" in user
    flops, moved = task.flops(task.full_shape(fit)), task.bytes(task.full_shape(fit))
    assert f"at the timed shape: {flops / 1e6:.3g} MFLOP, {moved / 1e6:.3g} MB" in user


@pytest.mark.parametrize("kind", ["llm", "hierarchical"])
def test_the_models_own_failure_reaches_its_next_prompt_located(kind):
    task = resolve_task("softmax")
    root = rec("a", sources=ROOT)
    tree = CandidateTree([root])
    provider = ScriptedProvider([BAD, "DECLINE\nDIAGNOSIS: looking"])
    if kind == "llm":
        prop = LLMProposer(provider, NoLog(), backend=StubBackend())
    else:
        prop = HierarchicalProposer(StubBackend(), agents={"schedule": LevelAgent(provider, NoLog(), "schedule")},
                                    memory=MemoryStore(":memory:"))
    (p,) = prop.propose(task, tree["a" * 8], {}, "schedule", context=_ctx(tree)).proposals
    child = _failed_child(root, p.sources)
    tree = CandidateTree([root, child], [ExpansionRecord(candidate="a" * 8, level="schedule", proposer=kind, id=1)])
    with pytest.raises(Declined):
        prop.propose(task, tree["a" * 8], tree["a" * 8].feedback(), "schedule", context=_ctx(tree))
    user = provider.prompts[1][1]["content"]
    assert "# Your last answer for this candidate failed" in user
    assert "verdict `compile_error`, decided by the `load` check" in user
    assert MESSAGE in user and "[schedule_error, likely at level schedule] a schedule step failed" in user
    # made from a correct candidate, at the schedule level alone: every item is that change's
    # (the source level's tag of the NaN item is not named: test_prompt_relay)
    assert "- [nonfinite, likely at level schedule] 77 NaN outputs" in user
    assert "Line 7 of the text you sent" in user and ">> 7 |     sch.decompose_reduction(b, j)" in user
    # the failed child under "Asked again", both paths (no second time in the history: queue round 3)
    assert "[schedule, schedule-agent] -> compile_error (load): schedule_softmax line 7" in user
    assert "from this candidate: [schedule, " not in user
    # the failed change itself, as a diff from the text shown (a stateless model cannot recall it)
    diff = user.split("The change that failed (a diff from the current text above):\n```diff\n", 1)[1]
    assert diff.startswith("--- current text\n+++ your failed change\n")
    assert '+    b = sch.get_sblock("T_softmax_norm")' in diff and "+    sch.parallel(i)" in diff
    assert "-    pass" in diff.split("```", 1)[0]


def test_a_later_success_at_that_level_clears_the_failure():
    task = resolve_task("softmax")
    root = rec("a", sources=ROOT)
    bad = _failed_child(root, {**ROOT, "schedule": "x"})
    good = rec("g", "schedule", ("a",), expansion_id=2)
    good.seq = 2
    tree = CandidateTree([root, bad, good])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog()).propose(task, tree["a" * 8], {}, "schedule", context=_ctx(tree))
    assert "# Your last answer for this candidate failed" not in provider.prompts[0][1]["content"]


DECLINES_IN_WORDS = [
    "No change at the graph level: R.nn.softmax already lowers to one PrimFunc. The slowness is the serial "
    "loop nest; the schedule level should parallelize the rows.",
    "I decline to change the graph: it is already minimal.",
    "Nothing to change here; leave the graph as it is.",
]


@pytest.mark.parametrize("answer", DECLINES_IN_WORDS)
def test_a_decline_in_words_is_a_decline_not_a_parse_error(answer):
    d = parse_decline(answer, "graph")
    assert d is not None and d.diagnosis.startswith(answer.split(":")[0].split(" ")[0])
    provider = ScriptedProvider([answer])
    prop = HierarchicalProposer(StubBackend(), agents={"graph": LevelAgent(provider, NoLog(), "graph")},
                                memory=MemoryStore(":memory:"))
    tree = CandidateTree([rec("a", sources=ROOT)])
    with pytest.raises(Declined) as e:
        prop.propose(resolve_task("softmax"), tree["a" * 8], {}, "graph", context=_ctx(tree))
    assert len(provider.prompts) == 1 and e.value.record["diagnosis"]  # no retry asking for code
    pol = prop.policy("greedy")
    pol.pre_search(tree, LEVELS)
    assert pol.open_levels(tree["a" * 8]) == ["schedule"]  # the role that declined is not asked there again
    if "schedule level" in answer:
        assert e.value.record["requests"] == [{"level": "schedule",
                                               "text": "the schedule level should parallelize the rows."}]


def test_unchanged_code_and_prose_twice_are_declines_with_their_reasons():
    task = resolve_task("softmax")
    tree = CandidateTree([rec("a", sources=ROOT)])
    same = "The default nest is fine for now.\n```python\n" + ROOT["schedule"] + "```\n"
    provider = ScriptedProvider([same])
    with pytest.raises(Declined) as e:
        LLMProposer(provider, NoLog()).propose(task, tree["a" * 8], {}, "schedule", context=_ctx(tree))
    assert e.value.record["diagnosis"] == "The default nest is fine for now."
    provider = ScriptedProvider(["The max and the sum should share one pass.", "Still: share one pass."])
    with pytest.raises(Declined) as e:
        LLMProposer(provider, NoLog()).propose(task, tree["a" * 8], {}, "schedule", context=_ctx(tree))
    assert len(provider.prompts) == 2 and "no code block" in provider.prompts[1][-1]["content"]
    assert e.value.record["diagnosis"] == "Still: share one pass."


def test_no_call_for_a_role_with_nothing_to_edit():
    task = resolve_task("softmax")
    root = rec("a", sources=ROOT)
    tree = CandidateTree([root])
    provider = ScriptedProvider(["```llvm\n; x\n```\n"])
    batch = LLMProposer(provider, NoLog()).propose(task, tree["a" * 8], {}, "source", context=_ctx(tree))
    assert batch.proposals == [] and provider.prompts == []
    prop = HierarchicalProposer(StubBackend(), agents={lv: LevelAgent(provider, NoLog(), lv) for lv in LEVELS},
                                memory=MemoryStore(":memory:"))
    assert prop.propose(task, tree["a" * 8], {}, "source", context=_ctx(tree)).proposals == []
    assert provider.prompts == []
    # the policy never leaves TVM's source open on a candidate without source text, and an LLM role
    # may be asked again at a level (its failure in the prompt) up to LLM_MAX_PER_LEVEL times
    pol = prop.policy("greedy")
    pol.pre_search(tree, LEVELS)
    node = tree["a" * 8]
    assert pol.max_per_level == LLM_MAX_PER_LEVEL and pol.open_levels(node) == ["graph", "schedule"]
    node.expansions.update({"graph": LLM_MAX_PER_LEVEL, "schedule": LLM_MAX_PER_LEVEL})
    assert pol.open_levels(node) == [] and not pol.expandable(tree, node)
    # the single LLM proposer's policy (the CLI takes it) has the same rules
    llm = LLMProposer(provider, NoLog(), backend=StubBackend())
    llm.propose(task, tree["a" * 8], {}, "source", context=_ctx(tree))  # no call, but it saw the text levels
    lpol = llm.policy("greedy")
    lpol.pre_search(tree, LEVELS)
    assert lpol.max_per_level == LLM_MAX_PER_LEVEL and lpol.open_levels(node) == []
    node.expansions.clear()
    assert lpol.open_levels(node) == ["graph", "schedule"] and provider.prompts == []
    node.expansions.update({"graph": LLM_MAX_PER_LEVEL, "schedule": LLM_MAX_PER_LEVEL})
    # the router, offered only source, picks an editable level again
    level, reason = FeedbackRouter(backend="tvm-llvm", levels=LEVELS)(tree, node, ["source"], LEVELS)
    assert level in ("graph", "schedule") and "have nothing to edit" in reason


@pytest.mark.parametrize("backend, level, needle", [
    ("tvm-llvm", "schedule", 'sch.get_sblock("T_add")'),
    ("tvm-llvm", "graph", "# fusion: ops+tir"),
    ("triton-interp", "source", "triton.next_power_of_2"),
])
def test_every_prompt_states_the_format_with_a_short_valid_example(backend, level, needle):
    from kstrata.agents.parse import edit_blocks
    from kstrata.agents.prompt import Feedback, PromptContext, TaskContract, build_prompt

    task = resolve_task("softmax")
    ctx = PromptContext(task=TaskContract.from_task(task), backend=backend, level=level,
                        sources={level: "x = 1\n"}, feedback=Feedback(), decline=True,
                        other_roles=() if backend.startswith("triton") else ("graph", "schedule"))
    system = build_prompt(ctx)[0]["content"]
    assert "Answer format:" in system and "<<<<<<< SEARCH" in system and "DECLINE\nDIAGNOSIS:" in system
    example = system.split("<example>\n", 1)[1].split("\n</example>", 1)[0]
    assert needle in example
    edits, prose = edit_blocks(example)  # the example itself parses as an answer
    assert len(edits) == 1 and any(line.strip() for line in prose)
    if backend.startswith("triton"):
        assert "no CROSS-LEVEL REQUEST line" in system and "CROSS-LEVEL REQUEST: <" not in system


def test_a_failed_candidate_shows_its_verifier_message():
    """A candidate to repair (e.g. a user's initial kernel) shows why it failed, not only the verdict."""
    task = resolve_task("softmax")
    root = rec("a", sources=ROOT, verdict="compile_error")
    root.evaluation = EvaluationRecord(verdict="compile_error", check="load", evidence={"message": MESSAGE})
    tree = CandidateTree([root])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog()).propose(task, tree["a" * 8], tree["a" * 8].feedback(), "schedule",
                                               context=_ctx(tree))
    user = provider.prompts[0][1]["content"]
    assert "- verdict: compile_error (load)\n- verifier message:\n```text\n" + MESSAGE + "\n```" in user


JUDGE_OOM = ("ReferenceFailure: softmax.py: the judge's process, which runs the task's reference and its float64 "
             "oracle (not the candidate), ran out of memory; verify at smaller shapes")


@pytest.mark.parametrize("check, message", [
    ("evaluator_exception", JUDGE_OOM),
    ("timing", "timing against eager failed: RuntimeError: oom: worker killed by signal SIGKILL"),
])
def test_the_judges_own_failure_is_never_charged_to_the_change(check, message):
    """The judge running out of memory is no verdict on the candidate: the next
    prompt says the change was not judged (never 'do not send that change
    again'), the history says so, and the router routes nothing by it."""
    task = resolve_task("softmax")
    root = rec("a", sources=ROOT)
    child = _failed_child(root, {**ROOT, "schedule": BAD.split("```python\n")[1].split("```")[0]},
                          verdict="runtime_error", check=check, message=message)
    child.evaluation.feedback = [{"level": None, "message": f"evaluation failed: {message}"}]
    tree = CandidateTree([root, child])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    prop = LLMProposer(provider, NoLog(), backend=StubBackend())
    prop._proposed[child.hash] = BAD.split("```python\n")[1].split("```")[0]
    with pytest.raises(Declined):
        prop.propose(task, tree["a" * 8], tree["a" * 8].feedback(), "schedule", context=_ctx(tree))
    user = provider.prompts[0][1]["content"]
    assert "# Your last answer for this candidate was not judged" in user
    assert "the judge itself failed while checking it" in user and "says nothing about your change" in user
    assert "Do not send that change again" not in user and "# Your last answer for this candidate failed" not in user
    assert message.split(":")[0] in user and "+    sch.parallel(i)" in user  # the judge's message and the change
    assert "-> not judged, the judge itself failed (not the candidate's fault): runtime_error" in user
    # the router takes no level from it: the judge's failure points at none
    _, reason = FeedbackRouter(backend="tvm-llvm")(tree, tree[child.hash], ["graph", "schedule"], LEVELS)
    assert reason.startswith("no routed feedback"), reason
    # the failed candidate's own prompt says it was not judged
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog()).propose(task, tree[child.hash], tree[child.hash].feedback(), "schedule",
                                               context=_ctx(tree))
    assert "- NOT JUDGED: the judge itself failed on this candidate" in provider.prompts[0][1]["content"]


def test_a_candidates_own_timing_failure_is_still_its_fault():
    """A timing failure that is not the judge's worker dying of memory stays the change's."""
    task = resolve_task("softmax")
    root = rec("a", sources=ROOT)
    child = _failed_child(root, {**ROOT, "schedule": "x"}, verdict="runtime_error", check="timing",
                          message="timing against eager failed: CandidateDied: the candidate process died")
    tree = CandidateTree([root, child])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog()).propose(task, tree["a" * 8], {}, "schedule", context=_ctx(tree))
    user = provider.prompts[0][1]["content"]
    assert "# Your last answer for this candidate failed" in user and "Do not send that change again" in user


def test_history_says_which_timings_are_untrusted_and_keeps_correct_siblings():
    """'correct, 0.0391x' read as a result although the timing was untrusted;
    a correct sibling made from the parent vanished from the later prompts."""
    from kstrata.agents.run_history import tree_history

    untrusted = "untrusted timing: still noisy after 2 re-timing(s)"
    root = rec("a", sources=ROOT, speedup=0.21, findings=[untrusted])
    mine = rec("b", "schedule", ("a",), rationale="rfactor the row sum", speedup=0.0391, findings=[untrusted])
    sib = rec("c", "schedule", ("a",), rationale="parallelize the rows and vectorize the inner loop",
              speedup=0.8)
    tree = CandidateTree([root, mine, sib])
    lines = tree_history(tree, tree["b" * 8], "schedule")
    assert "on the path to this candidate: [schedule, schedule-agent] rfactor the row sum -> correct, 0.0391x " \
           "(timing untrusted: not ranked)" in lines
    assert ("elsewhere in this run (cccccccc, from aaaaaaaa): [schedule, schedule-agent] parallelize the rows "
            "and vectorize the inner loop -> correct, 0.8x") in lines


# -- m23 (D, G): a faster baseline, the untimed-work line, the empty rebuild -----------------------------------

CEILING = {"text": "memory-bound at 100% of the roofline: little is left at the schedule or source level; only less "
                   "work (a different algorithm, fusing with neighbours, lower precision where allowed) helps",
           "level": "graph", "confidence": 0.4}


def _prompt_of(node_rec):
    tree = CandidateTree([node_rec])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog(), backend=StubBackend()).propose(
            resolve_task("gemv"), tree[node_rec.hash], tree[node_rec.hash].feedback(), "schedule",
            context=_ctx(tree))
    return tree, provider.prompts[0][1]["content"]


@pytest.mark.parametrize("speedup", [0.816, 1.3])
def test_a_faster_baseline_replaces_the_only_less_work_advice(speedup):
    """m23 gemv eec7707a: at 100% of the roofline the prompt said "at most about
    1x faster is possible ... only less work helps" of a candidate eager ran
    1.22x faster than; the next schedule change read 0.931x. A measured baseline
    faster than the candidate caps that advice: the prompt says so instead, and
    the finding routes no call to the graph level."""
    node = rec("a", sources=ROOT, speedup=speedup, findings=[CEILING])
    node.measurement.roofline_fraction, node.measurement.bound = 1.001, "memory"
    tree, user = _prompt_of(node)
    faster = speedup < 1
    assert ("only less work" in user) is not faster
    assert ("at most about 1x faster is possible" in user) is not faster
    assert ("but the eager baseline runs it 1.2x faster than this candidate" in user) is faster
    assert ("at least 1.2x faster is possible" in user) is faster
    from kstrata.agents.router import signals

    assert [s.level for s in signals(tree[node.hash])] == ([] if faster else ["graph"])


def test_a_finding_the_untrusted_line_quotes_is_said_once():
    """m23: "untimed work: ..." and "contended: ..." each came three times per
    prompt (in the untrusted-timing line, as a profiler line, repeated)."""
    untimed = ("untimed work: the candidate's process took 2.4 ms (median) to answer the cache flush before each "
               "timed call, the baseline's 0.596 ms for the same flush: work done outside the timed calls is not "
               "in its time")
    busy = "contended: other processes kept 1.67 of 2 CPUs busy during this timing, which used 2 thread(s)"
    node = rec("a", sources=ROOT, speedup=0.5, findings=[f"untrusted timing: {untimed}; {busy}", untimed, busy])
    _, user = _prompt_of(node)
    assert user.count("untimed work") == 1 and user.count("contended: other processes") == 1
    assert f"- profiler: untrusted timing: {untimed}; {busy}" in user


@pytest.mark.parametrize(("applied", "words"), [(0, "That schedule had no steps to replay"),
                                                (3, "Every one of its steps still applied")])
def test_the_rebuild_note_says_when_there_was_nothing_to_replay(applied, words):
    """m23 layernorm #3: the parent's schedule was `def schedule(sch): pass`,
    and the note said "Every step still applied"."""
    node = rec("a", sources=ROOT)
    tree = CandidateTree([node])
    rebuild = {"applied": applied, "failed": [], "funcs": ["layer_norm_rows"], "unscheduled": ["layer_norm_rows"]}
    text = HierarchicalProposer(StubBackend(), agents={}, memory=None).knowledge(
        resolve_task("layernorm"), _ctx(tree), tree[node.hash], "schedule", rebuild)
    assert f"{words}; schedule the new PrimFuncs (layer_norm_rows)." in text


# -- m25 (B, C): the answers of other levels are context, a contended reading has no roofline -----------------

def _prompt_at(tree, node_rec, level):
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog(), backend=StubBackend()).propose(
            resolve_task("softmax"), tree[node_rec.hash], tree[node_rec.hash].feedback(), level,
            context=_ctx(tree))
    return provider.prompts[0][1]["content"]


def test_another_levels_decline_is_context_not_an_answer_to_differ_from():
    """m25 softmax #2: the graph prompt asked to serve the schedule role's
    request, then listed that role's decline under "Asked again ... Propose
    something different from these", which read literally forbade serving it.
    Only this level's earlier answers are listed as ones to differ from."""
    from agent_fakes import declined_expansion

    root = rec("a", sources=ROOT, speedup=0.5)
    request = [{"level": "graph", "text": "fuse the three row passes into one PrimFunc"}]
    tree = CandidateTree([root], [declined_expansion("a", "schedule", "schedule", "expf stays scalar", request, 1)])
    user = _prompt_at(tree, root, "graph")
    assert "# Asked again" not in user and "Propose something different" not in user
    assert "# Requests from other agents for this level" in user  # the request itself, to serve
    assert "declined its level (expf stays scalar) and asked: fuse the three row passes" in user
    # said once, as the request it makes (queue round 3: listed again under the other levels' roles)
    assert user.count("expf stays scalar") == 1 and "# What the other levels' roles did" not in user
    # the schedule prompt on the same candidate lists that decline as its own level's earlier answer
    user = _prompt_at(tree, root, "schedule")
    assert "# Asked again" in user and "Propose something different" in user
    assert "# What the other levels' roles did" not in user


def test_a_contended_reading_says_so_once_and_marks_its_roofline():
    """m25: every prompt said "contended" three times and then derived "memory-bound
    at 8% of peak ... at most about 12x faster is possible" from that reading."""
    busy = ("contended: other processes kept 1.70 of 2 CPUs busy during this timing, which used 2 thread(s); "
            "candidate and baseline were not timed alike")
    memory = {"text": "memory-bound at 22% of peak bandwidth (3.2 of 15 GB/s): stream memory with contiguous, "
                      "vectorized accesses and enough parallel work", "level": "schedule", "confidence": 0.6}
    node = rec("a", sources=ROOT, speedup=1.04,
               findings=[f"untrusted timing: {busy} (timed 3 times in the search, every timing doubtful); not "
                         "ranked as a speedup: re-time it on a quiet machine (`kstrata retime RUN`)",
                         f"{busy}. Time it again on a quiet machine (`kstrata retime RUN`) before believing the "
                         "speedup", memory])
    node.measurement.roofline_fraction, node.measurement.bound = 0.219, "memory"
    _, user = _prompt_of(node)
    assert user.count("contended: other processes") == 1
    assert "memory-bound at 22%" not in user and "at most about" not in user
    # the fraction is still shown where known, marked (queue round 4: "roofline below" named none)
    assert "- roofline: 21.9% of the attainable peak, memory-bound (from the untrusted timing" in user
    assert "NOT TRUSTED" in user
    # believed, the same reading keeps its roofline and finding
    node = rec("a", sources=ROOT, speedup=1.04, findings=[memory])
    node.measurement.roofline_fraction, node.measurement.bound = 0.219, "memory"
    _, user = _prompt_of(node)
    assert "memory-bound at 22%" in user and "- roofline: 21.9% of the attainable peak" in user
    assert "at most about 4.6x faster" in user


def test_an_answer_over_the_limit_is_refused_before_it_is_parsed():
    """Red team rt51: an answer had no size limit in kstrata's process."""
    from kstrata.agents.parse import MAX_ANSWER_CHARS, ParseError, parse_answer

    with pytest.raises(ParseError) as got:
        parse_answer("<<<<<<< SEARCH\n" * (MAX_ANSWER_CHARS // 15 + 1), "x = 1\n")
    assert got.value.kind == "too_long" and "SEARCH/REPLACE" in str(got.value)


def test_a_fix_of_a_failed_change_is_asked_as_edits_of_the_current_text():
    """Queue round of 2026-12-05 (tilelang-c and tvm-llvm): asked for "a small fix" of the failed change,
    the model twice sent SEARCH/REPLACE edits of its failed text, which is not the current text, and lost
    a call to the format retry each time; the prompt now says which text edits apply to."""
    task = resolve_task("softmax")
    root = rec("a", sources=ROOT)
    child = _failed_child(root, {**ROOT, "schedule": "x"})
    tree = CandidateTree([root, child])
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog()).propose(task, tree["a" * 8], {}, "schedule", context=_ctx(tree))
    user = provider.prompts[0][1]["content"]
    assert "a small fix of it" in user
    assert ("Your failed change is not in the current text: SEARCH/REPLACE edits apply to the current `schedule` "
            "text above") in user
