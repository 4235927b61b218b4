"""What a model-in-the-loop run on triton-interp found missing from the prompts
(issue 19, m20: softmax/rmsnorm/cross_entropy with ``--proposer llm``):
declines in later prompts' history; an instruction when a candidate is asked
about again, with its earlier answers' full reasons; the tolerance's numbers;
what ``# kstrata-tune:`` markers are; the interpreter's loop-variable
pitfall; op-specific hints only for tasks that use those ops; the progress
line naming MetaSchedule only where it runs."""

from __future__ import annotations

import pytest
from agent_fakes import NoLog, ScriptedProvider, declined_expansion, rec

from kstrata import kernels
from kstrata.agents.base import ProposeContext
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.prompt import api_sheet
from kstrata.agents.router import Declined
from kstrata.agents.run_history import clip_words, reason
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

LONG = ("An alternative to the multi-row branch: a persistent kernel. At most MAX_PROGRAMS programs (2 per SM on "
        "an H200) stride over tiles of ROWS rows; each program loads the weight once and keeps it in registers for "
        "all its tiles, x is read once and y written once with coalesced row loads, and the 16384-column limit of "
        "the one-pass branch stays as it was, so rows longer than that still go to the chunked two-pass kernel.")


class InterpBackend:
    """triton-interp as the agents see it: one level, nothing timed, no level context."""

    name, levels, timing_meaningful = "triton-interp", ("source",), False

    def level_context(self, task, sources, level):
        return {}


def _prompt(task_name, tree, node="a", answer="DECLINE\nDIAGNOSIS: looking"):
    task = resolve_task(task_name)
    provider = ScriptedProvider([answer])
    with pytest.raises(Declined):
        LLMProposer(provider, NoLog(), backend=InterpBackend()).propose(
            task, tree[node * 8], tree[node * 8].feedback(), "source",
            context=ProposeContext(backend="triton-interp", levels=("source",), tree=tree))
    return provider.prompts[0][1]["content"]


def _src(name):
    return {"source": kernels.initial_source("triton", name)}


def test_a_decline_elsewhere_is_in_later_prompts_history_marked_as_a_decline():
    """A decline on 'b' (a child of the root) showed up nowhere in the prompt
    for the root's other child 'c': only '... -> correct' lines were listed."""
    tree = CandidateTree(
        [rec("a", sources=_src("softmax"), backend="triton-interp"),
         rec("b", "source", ("a",), sources=_src("softmax"), rationale="multi-row tile", backend="triton-interp"),
         rec("c", "source", ("a",), sources=_src("softmax"), rationale="run-time dispatch",
             backend="triton-interp")],
        [declined_expansion("b", "source", "single", "memory minimum reached; the rest needs GPU timing",
                            [{"level": "schedule", "text": "time it on triton"}], 1)])
    user = _prompt("softmax", tree, "c")
    assert ("- elsewhere in this run (bbbbbbbb): [source, single-agent] DECLINED (no change made): memory minimum "
            "reached; the rest needs GPU timing (asked schedule: time it on triton)") in user
    # a decline on the path to the candidate is named as such
    tree2 = CandidateTree(
        [rec("a", sources=_src("softmax"), backend="triton-interp"),
         rec("b", "source", ("a",), sources=_src("softmax"), rationale="multi-row tile", backend="triton-interp")],
        [declined_expansion("a", "source", "single", "nothing left at the source level", [], 1)])
    user = _prompt("softmax", tree2, "b")
    assert ("- on the path to this candidate (aaaaaaaa): [source, single-agent] DECLINED (no change made): nothing left "
            "at the source level") in user


def test_asking_again_lists_earlier_answers_whole_and_asks_for_something_different():
    tree = CandidateTree(
        [rec("a", sources=_src("rmsnorm"), backend="triton-interp"),
         rec("b", "source", ("a",), sources=_src("rmsnorm"), rationale=LONG, backend="triton-interp"),
         rec("c", "source", ("a",), sources=_src("rmsnorm"), rationale="two passes over x", verdict="wrong_output",
             backend="triton-interp")],
        [declined_expansion("a", "source", "single", "the rest needs a GPU timing", [], 1)])
    user = _prompt("rmsnorm", tree, "a")
    assert "# Asked again: this candidate was expanded before in this run" in user
    assert f"- child bbbbbbbb [source, source-agent] -> correct\n  its rationale: {LONG}" in user  # in full
    assert "- child cccccccc [source, source-agent] -> wrong_output\n  its rationale: two passes over x" in user
    assert "- DECLINED [source, single-agent]: the rest needs a GPU timing" in user
    assert "Propose something different from these" in user and "or decline" in user
    # a first expansion has no such section
    fresh = CandidateTree([rec("a", sources=_src("rmsnorm"), backend="triton-interp")])
    assert "# Asked again" not in _prompt("rmsnorm", fresh, "a")


def test_rationales_are_cut_at_a_word_boundary_with_an_ellipsis():
    cut = reason(LONG, 160)
    assert len(cut) <= 160 and cut.endswith(" ...")
    assert LONG.startswith(cut[:-4]) and LONG[len(cut) - 4] == " "  # the word before the cut is whole
    assert clip_words("short enough", 40) == "short enough"


def test_the_tolerance_states_the_dtype_bound_numbers():
    tree = CandidateTree([rec("a", sources=_src("rmsnorm"), backend="triton-interp")])
    user = _prompt("rmsnorm", tree, "a")
    assert ("- tolerance: elementwise |out - oracle| <= 4 x ref_err + atol + rtol x |oracle| against a float64 "
            "oracle") in user
    assert "atol = 1e-05, rtol = 0.0001 (the float32 bound)" in user
    assert "plus a dtype-based bound;" not in user


def test_kstrata_tune_markers_are_explained_only_when_the_code_has_them():
    src = _src("rmsnorm")
    assert "# kstrata-tune:" in src["source"]
    tree = CandidateTree([rec("a", sources=src, backend="triton-interp")])
    user = _prompt("rmsnorm", tree, "a")
    assert ("`# kstrata-tune: {...}` after a module-level integer constant marks it as a tunable of kstrata's "
            "built-in Triton autotuner (`--proposer builtin`)") in user
    assert "You may change these constants, and keep, edit or drop the markers." in user
    plain = {"source": "\n".join(ln.split("  # kstrata-tune:")[0] for ln in src["source"].splitlines())}
    tree = CandidateTree([rec("a", sources=plain, backend="triton-interp")])
    assert "kstrata-tune" not in _prompt("rmsnorm", tree, "a")


def test_the_interpreter_pitfall_is_stated_on_interpreter_backends_only():
    pitfall = "the loop variable of a `for t in range(...)` inside a kernel is a plain Python int"
    assert pitfall in api_sheet("triton-interp", "source")
    assert pitfall not in api_sheet("triton", "source")
    tree = CandidateTree([rec("a", sources=_src("rmsnorm"), backend="triton-interp")])
    assert "`tl.cast(t, tl.int64)`" in _prompt("rmsnorm", tree, "a")


def test_the_interpreter_pitfall_is_true():
    """The sheet's claim, checked under TRITON_INTERPRET=1 in a fresh process."""
    import subprocess
    import sys
    import textwrap

    pytest.importorskip("triton")
    code = textwrap.dedent("""
        import torch, triton, triton.language as tl
        @triton.jit
        def bad(x_ptr, n, BLOCK: tl.constexpr):
            for t in range(tl.program_id(0), n, tl.num_programs(0)):
                off = t.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + off, off.to(tl.float32))
        @triton.jit
        def good(x_ptr, n, BLOCK: tl.constexpr):
            for t in range(tl.program_id(0), n, tl.num_programs(0)):
                off = tl.cast(t, tl.int64) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + off, off.to(tl.float32))
        x = torch.zeros(8)
        try:
            bad[(2,)](x, 2, BLOCK=4)
            print("bad ran")
        except Exception as e:
            print("bad failed", "has no attribute 'to'" in str(e))
        good[(2,)](x, 2, BLOCK=4)
        print("good", x.tolist() == list(range(8)))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "TRITON_INTERPRET": "1"})
    assert "bad failed True" in out.stdout and "good True" in out.stdout, out.stdout + out.stderr


def test_op_specific_hints_only_for_tasks_that_use_those_ops():
    nan_hint, dot_hint = "`exp(-inf - -inf)` is NaN", 'tl.dot(a, b, input_precision="ieee")'
    tree = CandidateTree([rec("a", sources=_src("rmsnorm"), backend="triton-interp")])
    user = _prompt("rmsnorm", tree, "a")
    assert nan_hint not in user and dot_hint not in user
    tree = CandidateTree([rec("a", sources=_src("softmax"), backend="triton-interp")])
    user = _prompt("softmax", tree, "a")
    assert nan_hint in user and dot_hint not in user
    sheet = api_sheet("triton-interp", "source", "def forward(self, a, b):\n    return a @ b\n")
    assert dot_hint in sheet and nan_hint not in sheet
    assert dot_hint in api_sheet("triton", "source", "torch.matmul(a, b)")
    full = api_sheet("triton", "source")  # no code given: every hint
    assert nan_hint in full and dot_hint in full


def test_the_progress_line_names_metaschedule_only_where_it_runs():
    from kstrata.cli.progress import proposing_how

    assert "MetaSchedule" not in proposing_how("triton-interp", "llm:queue")
    assert "MetaSchedule" not in proposing_how("triton-interp", "builtin")
    assert "MetaSchedule" not in proposing_how("tvm-llvm", "llm:queue")
    assert "MetaSchedule tuning" in proposing_how("tvm-llvm", "builtin")
