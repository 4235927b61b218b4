"""What a prompt claims must be what was checked, and what it points at must
be in it (queue round with a person as the model, eight runs): the scope a
candidate was verified at, sections and exemplars named, relayed text cut
visibly, the paired speedup before an absolute time, the task's input draws,
and on TileLang the ``SCHEDULE`` keys the source reads and the C target's facts."""

from __future__ import annotations

import re

import pytest
from agent_fakes import NoLog, ScriptedProvider, StubBackend, declined_expansion, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.parse import clip_marked, parse_cross_level_requests, parse_decline
from kstrata.agents.router import Declined
from kstrata.backends.registry import get_backend
from kstrata.search.tree import UNTRUSTED_PREFIX, CandidateTree
from kstrata.store.records import EvaluationRecord
from kstrata.tasks.loader import resolve_task

SMALL = ("small: 3 of the task's 4 sweep shapes were not tested (B=3, D=4099; B=127, D=1001; B=17, D=65537); "
         "--scope full tests them (optimize confirms its best at the full scope)")


def _prompt(tree, node, backend=None, task="softmax", levels=("graph", "schedule", "source"), level=None,
            backend_name="tvm-llvm"):
    provider = ScriptedProvider(["DECLINE\nDIAGNOSIS: looking"])
    prop = LLMProposer(provider, NoLog(), backend=backend or StubBackend())
    ctx = ProposeContext(backend=backend_name, levels=levels, tree=tree)
    with pytest.raises(Declined):
        prop.propose(resolve_task(task), tree[node * 8], tree[node * 8].feedback(), level or levels[-1],
                     context=ctx)
    return provider.prompts[0][1]["content"]


def _verified(r, **evidence):
    r.evaluation = EvaluationRecord(verdict="correct", evidence=evidence)
    return r


class Interp:
    name, levels, timing_meaningful = "triton-interp", ("source",), False

    def level_context(self, task, sources, level):
        return {}


@pytest.mark.parametrize("scoped", [True, False])
def test_the_goal_states_the_scope_verified_never_more(scoped):
    """A small-scope check was stated as "correct on every public and hidden
    test"; the full check then failed."""
    evidence = {"message": "54 public and 138 hidden tests pass"} | ({"scope": SMALL} if scoped else {})
    root = _verified(rec("a", sources={"source": "import triton\n"}, backend="triton-interp"), **evidence)
    text = _prompt(CandidateTree([root]), "a", Interp(), levels=("source",), backend_name="triton-interp")
    assert "every public and hidden test" not in text
    assert "Verified so far: 54 public and 138 hidden tests pass" in text
    assert ("at a reduced scope only" in text and "B=17, D=65537" in text) is scoped


def _headings(text):
    return {m.group(1).strip() for m in re.finditer(r"^#+ (.+)$", text, re.MULTILINE)}


def test_a_prompt_names_only_sections_and_exemplars_it_contains():
    """'listed under "Requests from other agents" above' with no such section;
    "(the norm exemplar: ...)" in a prompt without exemplars."""
    root = rec("a", sources={"graph": "# kstrata-tvm graph\n", "schedule": "def schedule(sch):\n    pass\n"})
    child = rec("b", "graph", ("a",), expansion_id=1)
    for tree, node, level in ((CandidateTree([root, child]), "a", "schedule"),
                              (CandidateTree([root]), "a", "graph")):
        text = _prompt(tree, node, level=level, task="layernorm")
        heads = _headings(text)
        for named in re.findall(r'listed under "([^"]+)" above', text):
            assert any(h.startswith(named) for h in heads), named
        if "exemplar" in text.lower():
            assert any(h.lower().startswith("exemplar") for h in heads), "exemplar named, none shown"
    # with an open request for the level, the section exists and is named
    asked = [declined_expansion("a", "graph", "graph", "fine", [{"level": "schedule", "text": "split rows"}], 2)]
    text = _prompt(CandidateTree([root, child], asked), "a", level="schedule", task="layernorm")
    assert "# Requests from other agents for this level" in text
    assert 'listed under "Requests from other agents for this level" above' in text


def test_relayed_text_is_cut_at_a_word_with_a_marker():
    long = "use a shifted two-pass variance, " * 60 + "because the shift keeps it exact"
    (req,) = parse_cross_level_requests(f"CROSS-LEVEL REQUEST: source: {long}\n")
    assert req["text"].endswith("more characters]") and "[... cut: " in req["text"]
    kept = req["text"].split(" [... cut: ")[0]
    assert long.startswith(kept) and long[len(kept)] == " "  # a word boundary
    d = parse_decline("DECLINE\nDIAGNOSIS: " + long * 3 + "\nCROSS-LEVEL REQUEST: graph: fuse\n", "schedule")
    assert "[... cut: " in d.diagnosis and not re.search(r"\w\[\.\.\.", d.diagnosis)
    assert clip_marked("short", 10) == "short"
    assert clip_marked("alpha beta gamma", 12) == "alpha beta [... cut: 6 more characters]"


def test_feedback_leads_with_the_paired_speedup_and_explains_the_flush_note():
    untimed = ("untimed work: the candidate's process took 3 ms (median) to answer the cache flush before "
               "each timed call, the baseline's 1.88 ms for the same flush: work done outside the timed calls "
               "is not in its time")
    root = rec("a", sources={"graph": "# kstrata-tvm graph\n", "schedule": "def schedule(sch):\n    pass\n"},
               speedup=0.0448, findings=[f"untrusted timing: {untimed}"])
    text = _prompt(CandidateTree([root]), "a", level="schedule")
    feedback = text.split("# Feedback on the current candidate", 1)[1]
    assert feedback.index("speedup vs eager") < feedback.index("- time:")
    assert "paired (candidate and baseline timed in alternation" in feedback
    assert "compare candidates by their speedups" in feedback
    assert "what this means: before each timed call, the timer asks each process to flush the cache" in feedback


def test_the_task_lists_its_input_draws():
    task = resolve_task("softmax")
    root = rec("a", sources={"graph": "# kstrata-tvm graph\n", "schedule": "def schedule(sch):\n    pass\n"})
    text = _prompt(CandidateTree([root]), "a", level="schedule")
    assert "- input draws" in text
    for name in task.meta.distributions:
        assert f"  - `{name}`: " in text, name


TL_SOURCE = '''import tilelang
import tilelang.language as T

SCHEDULE = {"threads": 1, "lanes": 16}


@tilelang.jit(out_idx=[-1])
def k(rows, d, threads, lanes):
    pass


class ModelNew:
    def forward(self, x):
        return k(x.shape[0], x.shape[1], SCHEDULE["threads"], SCHEDULE["lanes"])(x)
'''


@pytest.mark.parametrize("level", ["schedule", "source"])
def test_tilelang_c_prompts_list_the_schedule_keys_read_and_the_c_target_facts(level):
    backend = get_backend("tilelang-c")
    root = rec("a", sources={"graph": "one kernel", "schedule": '{"threads": 1}', "source": TL_SOURCE},
               backend="tilelang-c")
    text = _prompt(CandidateTree([root]), "a", backend, task="layernorm", levels=backend.levels, level=level,
                   backend_name="tilelang-c")
    assert "the blocks of `T.Kernel(n, threads=...)` run one after another in one thread" in text
    if level == "schedule":
        assert "reads these `SCHEDULE` keys: `threads`, `lanes`" in text
        assert '`SCHEDULE = {"threads": 1, "lanes": 16}`' in text
        assert "You may tile and split loops" not in text  # nothing the JSON can do
        assert "compile_flags" not in text
    else:
        assert 'compile_flags=["-O3", "-march=native"]' in text and "no optimization flag (`-O0`)" in text
        assert "`T.vectorized(k)` and `T.Parallel(n)` over an elementwise body of arithmetic" in text


NOISY = UNTRUSTED_PREFIX + " contended: other processes kept 1.7 of 2 CPUs busy"


def test_tilelang_c_advice_names_no_parallel_loops_and_says_the_schedule_json_wins():
    """Queue round 5 (fused_exp_mean, tilelang-c): the goal of an untrusted run
    advised "parallel and vectorized loops" though the C target runs every
    block in one thread, and the source scope offered to change the values the
    source reads from ``SCHEDULE``, which the schedule level's JSON overrides."""
    backend = get_backend("tilelang-c")
    root = rec("a", sources={"graph": "one kernel", "schedule": '{"threads": 1}', "source": TL_SOURCE},
               backend="tilelang-c", speedup=0.2, findings=(NOISY,))
    tree = CandidateTree([root])
    text = _prompt(tree, "a", backend, task="layernorm", levels=backend.levels, level="source",
                   backend_name="tilelang-c")
    assert "no timing in this run was trusted" in text  # the goal line at issue is there
    assert "parallel and vectorized loops" not in text
    assert "vectorized loops and compiler flags: the C target runs every block in one thread" in text
    assert "a key the `schedule` level's JSON sets overrides the source's default for it" in text
    tvm = _prompt(CandidateTree([rec("a", sources={"graph": "g", "schedule": "s"}, speedup=0.2, findings=(NOISY,))]), "a",
                  level="schedule")
    assert "(fewer passes over memory, parallel and vectorized loops)" in tvm


def test_reduced_precision_is_no_leave_to_accumulate_in_half():
    """Queue round 5 (rmsnorm_fp16, triton-interp): 'reduced-precision compute
    allowed' read as leave to square and sum the row in float16; x*x overflowed
    on the large draw and every output was 0. The line now says the outputs
    must still pass and what needs a float32 accumulator; fp32 tasks keep theirs."""
    from kstrata.agents.prompt import TaskContract

    half = TaskContract.from_task(resolve_task("rmsnorm_fp16")).precision
    assert half.startswith("reduced-precision compute allowed (arithmetic in float16 is not rejected as such")
    assert "a square, exp or long sum that overflows or loses precision in float16 needs a float32 accumulator" \
        in half
    bf16 = TaskContract.from_task(resolve_task("layernorm_bf16")).precision
    assert "loses precision in bfloat16 needs a float32 accumulator" in bf16
    assert TaskContract.from_task(resolve_task("softmax")).precision == TaskContract.precision
