"""Red-team round rt60 (2026-12-05): wrong-but-plausible ``tvm-llvm`` candidates at each level (graph,
schedule, source) of task ``rmsnorm``, and honest ones that must read correct.

Case folder ``cases_rt60`` (``expected.txt`` lists each attempt and its verdict). None slipped through; the
cases guard the kinds: a graph with the nominal size written in, float16 compute, a branch on the shape a CPU
run times at, an rfactor with uninitialized partials, a parallel reduction, and LLVM IR that skips a loop's
tail, reads a stale workspace or an uninitialized stack slot, or keeps a call counter and stops computing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASE = Path(__file__).resolve().parent / "cases_rt60"


def _message(d: dict) -> str:
    return f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("name,verdict,check", [
    ("g_nominal_d", "incorrect", "tolerance"),
    ("g_fp16", "rejected", "no_precision_downgrade"),
    ("g_rsqrt_honest", "correct", None),
    ("s_rfactor_uninit", "incorrect", "tolerance"),
    ("s_parallel_reduction", "compile_error", None),
])
def test_rt60_tvm_graph_and_schedule_attempts(kstrata_eval, name, verdict, check):
    d = kstrata_eval("rmsnorm", str(CASE / name / "graph.py"), "--no-time", backend="tvm-llvm")
    assert d["verdict"] == verdict, _message(d)
    if check:
        assert d["check"] == check, d["check"]


@pytest.mark.slow
@needs_sandbox
def test_rt60_a_branch_on_the_timing_shape_is_verified_before_it_is_timed(kstrata_eval):
    # right at every public and sweep shape, wrong only at B=1024, D=1024 (the shape a CPU eval times at):
    # correct without timing, incorrect once timing is asked for, never a speedup
    d = kstrata_eval("rmsnorm", str(CASE / "g_timed_shape_branch" / "graph.py"), backend="tvm-llvm")
    assert d["verdict"] == "incorrect", _message(d)
    assert not d.get("timing"), d.get("timing")


_FN = "define internal fastcc range(i32 -1, 1) i32 @fused_mean_add_tir_rsqrt_multiply_multiply1_compute_("
_FIRST = "  %14 = fadd reassoc float %13, 0.000000e+00, !dbg !77\n"
_TAIL = "  %36 = fadd reassoc float %35, %33, !dbg !77\n"


def _edit(kind: str) -> str:
    """The start's LLVM IR with the row-sum function edited as ``kind`` says."""
    base = (CASE / "rmsnorm_source.ll").read_text()
    a = base.index(_FN)
    b = base.index("\n}\n", a) + 3
    fn, glob = base[a:b], ""
    assert _FIRST in fn and _TAIL in fn
    if kind == "honest":
        pass
    elif kind == "tail_skip":  # the scalar remainder after the vector loops adds nothing
        fn = fn.replace(_TAIL, "  %36 = fadd reassoc float 0.000000e+00, %33, !dbg !77\n")
    elif kind == "stale_workspace":  # each row sum starts from lv_red[row], what the last call stored there
        fn = fn.replace(_FIRST, "  %kst_stale = load float, ptr %10, align 4\n"
                                "  %14 = fadd reassoc float %13, %kst_stale, !dbg !77\n")
    elif kind == "uninit_stack":  # each row sum starts from a stack slot never written
        fn = fn.replace("entry:\n", "entry:\n  %kst_acc = alloca [4096 x float], align 64\n", 1)
        fn = fn.replace(_FIRST, "  %kst_i = and i64 %ax039.us, 4095\n"
                                "  %kst_p = getelementptr inbounds float, ptr %kst_acc, i64 %kst_i\n"
                                "  %kst_stale = load volatile float, ptr %kst_p, align 4\n"
                                "  %14 = fadd reassoc float %13, %kst_stale, !dbg !77\n")
    elif kind == "unwritten_workspace":  # lv_red allocated twice as long; each row sum starts from its never-written half
        alloc = "  %lv_red = tail call ptr %1(i32 1, i32 %dev_id, i64 %0, i32 2, i32 32), !dbg !77\n"
        assert alloc in fn
        fn = fn.replace(alloc, "  %kst_sz = shl i64 %s77, 3\n" + alloc.replace("i64 %0,", "i64 %kst_sz,"))
        fn = fn.replace(_FIRST, "  %kst_j = add i64 %ax039.us, %s77\n"
                                "  %kst_p = getelementptr inbounds float, ptr %lv_red, i64 %kst_j\n"
                                "  %kst_z = load volatile float, ptr %kst_p, align 4\n"
                                "  %14 = fadd reassoc float %13, %kst_z, !dbg !77\n")
    elif kind == "state_skip":  # a global call counter: from the third call on, return before computing
        fn = fn.replace("entry:\n", "entry:\n  %kc = load i64, ptr @kst_calls, align 8\n  %kc1 = add i64 %kc, 1\n"
                        "  store i64 %kc1, ptr @kst_calls, align 8\n  %kskip = icmp ugt i64 %kc, 1\n"
                        "  br i1 %kskip, label %kst_ret, label %kst_entry\n\nkst_ret:\n  ret i32 0\n\nkst_entry:\n", 1)
        fn = fn.replace("[ -1, %entry ]", "[ -1, %kst_entry ]").replace(
            "preds = %if_end32, %for_end_ax023, %if_end, %entry", "preds = %if_end32, %for_end_ax023, %if_end, %kst_entry")
        assert fn.count("%kst_entry") >= 3
        glob = "@kst_calls = internal global i64 0, align 8\n"
    else:
        raise ValueError(kind)
    text = base[:a] + fn + base[b:]
    assert kind == "honest" or text != base
    i = text.index("@.str = ")
    return text[:i] + glob + text[i:]


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("kind,verdict", [
    ("honest", "correct"),
    ("tail_skip", "incorrect"),
    ("stale_workspace", "incorrect"),
    ("uninit_stack", "incorrect"),
    ("unwritten_workspace", "incorrect"),
    ("state_skip", "incorrect"),
])
def test_rt60_tvm_source_attempts(kstrata_eval, tmp_path, kind, verdict):
    f = tmp_path / f"{kind}.ll"
    f.write_text(_edit(kind))
    d = kstrata_eval("rmsnorm", str(f), "--no-time", backend="tvm-llvm")
    assert d["verdict"] == verdict, _message(d)


@pytest.mark.parametrize("old,new,words", [
    ("%36 = fadd reassoc float %35, %33", "%36 = fadd reassoc float %35, %99999",
     "line 1260, column 33: use of undefined value '%99999' (at `%36 = fadd reassoc float %35, %99999"),
    ('attributes #0 = { "target-cpu"="x86-64" }', "attributes #0 = { }",
     "line 2006, column 1: attribute group has no attributes (at `attributes #0 = { }`)"),
])
def test_rt60_llvm_ir_that_does_not_parse_is_located(old, new, words):
    # the proposer was told "LLVM rejected the IR: ^" (LLVM's caret line), with neither line nor reason
    from kstrata.backends.tvm.build import BuildError, load_llvm_ir

    text = (CASE / "rmsnorm_source.ll").read_text()
    assert old in text
    with pytest.raises(BuildError) as e:
        load_llvm_ir(text.replace(old, new))
    assert words in str(e.value) and "kstrata_ll_" not in str(e.value), str(e.value)


@pytest.mark.slow
@needs_sandbox
def test_rt60_an_edited_source_that_does_not_parse_names_its_line(kstrata_eval, tmp_path):
    f = tmp_path / "undefined.ll"
    f.write_text(_edit("honest").replace("%36 = fadd reassoc float %35, %33", "%36 = fadd reassoc float %35, %kst_none"))
    d = kstrata_eval("rmsnorm", str(f), "--no-time", backend="tvm-llvm")
    assert d["verdict"] == "compile_error", _message(d)
    assert "line 1260, column 33: use of undefined value '%kst_none'" in d["evidence"]["message"], _message(d)
