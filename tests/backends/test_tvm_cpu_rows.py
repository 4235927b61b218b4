"""tvm-llvm row-wise kernels (rmsnorm, softmax, layernorm): the built-in CPU
rules give one parallel pass per row whose reductions and elementwise loops
are vectorized on the default (symbolic) build, and those variants are
correct at every small and sweep shape. Structure only: the speed is in
``benchmarks/results/cpu_rows.txt``."""

from __future__ import annotations

import re

import pytest

from kstrata.backends.registry import get_backend
from kstrata.backends.tvm import build as tb
from kstrata.backends.tvm import isolated
from kstrata.backends.tvm.coverage import run_once
from kstrata.backends.tvm.lower import lower_graph, with_build, with_fusion
from kstrata.backends.tvm.rules import COMPOSITE, graph_variants, schedule_variants
from kstrata.backends.tvm.schedule import replay_schedule
from kstrata.tasks.loader import resolve_task

TIMED = {"B": 1024, "D": 1024}  # the quick start's timing shape on this CPU


@pytest.fixture(scope="module")
def llvm():
    return get_backend("tvm-llvm")


@pytest.fixture(scope="module")
def rmsnorm_rows(llvm):
    """rmsnorm's start with the CPU graph rules' first proposal (``fusion: rows``)
    and the composite recipes of the sandboxed schedule expansion of it."""
    task = resolve_task("rmsnorm")
    start = llvm.initial_sources(task)
    first = graph_variants(start["graph"])[0]
    sources = {**start, "graph": first.text}
    found, _ = isolated.schedule_expansion(task, sources, "tvm-llvm")
    return task, sources, [v for v in found if all(r in COMPOSITE for r in v["rule"].split("+"))]


def _ir(llvm, task, sources) -> str:
    return llvm.generate_source(task, sources, task.full_shape(TIMED))


def _kernels(ir: str) -> list[str]:
    return [k for k in re.findall(r"define dllexport i32 @__tvm_ffi_(\w+)", ir) if k != "main"]


def test_llvm_target_reassociates_but_keeps_ieee_special_values():
    target = tb.make_target("llvm").export()
    assert target.get("fast-math-reassoc") is True
    assert not any(target.get(k) for k in ("fast-math", "fast-math-nnan", "fast-math-ninf", "fast-math-nsz"))


def test_rows_fusion_is_proposed_first_on_cpu_only_where_it_fuses(llvm):
    """rmsnorm's ``x ** 2`` is a PrimFunc of its own under ``ops+tir``; ``rows``
    (first of the CPU graph proposals) fuses it, and ``none`` is not proposed
    beside it unless the graph has a GEMM. Graphs whose lowering ``rows``
    cannot change (a GEMM, a mean of an input) get no such proposal."""
    task = resolve_task("rmsnorm")
    graph = llvm.initial_sources(task)["graph"]
    first = graph_variants(graph)[0]
    assert first.rule == "fusion" and "-> rows" in first.description
    # a row-wise graph is not also unfused ('none' took the quick start's lookahead); one with a GEMM is
    assert not any("-> none" in v.description for v in graph_variants(graph))
    with_gemm = llvm.initial_sources(resolve_task("rmsnorm_matmul"))["graph"]
    assert [v.description.split(" (")[0] for v in graph_variants(with_gemm) if v.rule == "fusion"] == [
        "fusion: ops+tir -> rows", "fusion: ops+tir -> none"]
    shape = task.full_shape(task.small_shapes[0])
    assert len(lower_graph(task, graph, shape).funcs) == 2
    assert len(lower_graph(task, first.text, shape).funcs) == 1
    for name in ("matmul_square", "mean_dim", "relu"):
        other = llvm.initial_sources(resolve_task(name))["graph"]
        assert not any("rows" in v.description for v in graph_variants(other)), name


def test_rmsnorm_recipes_are_one_parallel_vectorized_pass_and_correct_everywhere(llvm, rmsnorm_rows):
    """Each composite recipe on the rows graph builds (symbolic, as timed) to one
    kernel that runs its rows in parallel, sums each row in vector partial sums
    folded once (``llvm.vector.reduce.fadd``), and scales the row with vector
    loads and stores, with no scalar libm call; and it is correct at every small
    and sweep shape (D=77, D=2, D=8193: no multiple of the lanes)."""
    task, sources, recipes = rmsnorm_rows
    assert {v["rule"] for v in recipes} >= {"fuse_rows", "reduce_vec"}
    for v in recipes:
        cand = {**sources, "schedule": v["text"]}
        ir = _ir(llvm, task, cand)
        assert ir.startswith("; kstrata-tvm source target=llvm shape=symbolic"), v["description"]
        assert len(_kernels(ir)) == 1, (v["description"], _kernels(ir))
        assert "TVMBackendParallelLaunch" in ir, v["description"]
        assert re.search(r"llvm\.vector\.reduce\.fadd\.v(8|16)f32", ir), v["description"]
        assert re.search(r"store <(8|16) x float>", ir), v["description"]
        for shape in task.small_shapes + task.sweep_shapes:
            ok, why = run_once(llvm, task, cand, shape)
            assert ok, (v["description"], shape, why)


def test_recipes_differ_on_the_build_that_runs(llvm, rmsnorm_rows):
    """fuse_rows by 8 and by 16, with and without rfactor, are one program on a
    symbolic build (their lanes apply only where they divide a constant extent):
    the expansion proposes one of them, and none that is the parent's program."""
    task, sources, recipes = rmsnorm_rows
    funcs = lower_graph(task, sources["graph"], task.full_shape(task.nominal_shape), symbolic=True).funcs

    def program(text: str) -> str:
        scheduled, _, failed = replay_schedule(funcs, text)
        assert not failed
        return "\n".join(scheduled[n].script() for n in sorted(scheduled))

    programs = [program(v["text"]) for v in recipes]
    assert len(set(programs)) == len(programs)
    assert program(sources["schedule"]) not in programs
    assert sum(v["rule"] == "fuse_rows" for v in recipes) == 1


def test_lanes_vectorize_only_where_they_divide_the_extent(llvm):
    """The fuse_rows variants vectorize with TVM where the lanes divide D (a
    static build at D=1024: ``T.vectorized``, rfactor'd partial sums) and leave
    the loops whole where they do not (D=77, or any symbolic D): TVM's vectorize
    of a split with a tail is scalarized lane by lane, LLVM's is a vector body."""
    task = resolve_task("rmsnorm")
    start = llvm.initial_sources(task)
    sources = {**start, "graph": with_fusion(start["graph"], "rows")}
    funcs = llvm.lower(task, sources, task.nominal_shape).funcs
    recipes = schedule_variants(funcs, sources["schedule"], rules=["fuse_rows"])
    static = {**sources, "graph": with_build(sources["graph"], "static")}
    for v in recipes:
        at = {name: lower_graph(task, g, task.full_shape(s), symbolic=sym).funcs
              for name, g, s, sym in (("1024", static["graph"], TIMED, False),
                                      ("77", static["graph"], {"B": 5, "D": 77}, False),
                                      ("symbolic", sources["graph"], TIMED, True))}
        scripts = {}
        for name, f in at.items():
            scheduled, _, failed = replay_schedule(f, v.text)
            assert not failed, (v.description, name, failed)
            scripts[name] = "\n".join(g.script() for g in scheduled.values())
        if "vectorize" in v.description or "rfactor" in v.description:
            assert "T.vectorized" in scripts["1024"], v.description
        assert "T.vectorized" not in scripts["77"] and "T.vectorized" not in scripts["symbolic"], v.description


@pytest.mark.parametrize("name,block,kept", [("rmsnorm", "lv_red", None), ("softmax", "T_softmax_expsum", "T_softmax_exp")])
def test_reduce_vec_inlines_only_producers_that_feed_the_reduction_alone(llvm, name, block, kept):
    """reduce_vec inlines rmsnorm's ``x ** 2`` (read by the sum alone) into the
    sum, so no serial B x D pass is left before it; softmax's ``exp`` (read by
    the sum and the output) stays computed once."""
    task = resolve_task(name)
    start = llvm.initial_sources(task)
    sources = {**start, "graph": with_fusion(start["graph"], "rows")}
    funcs = llvm.lower(task, sources, task.nominal_shape).funcs
    recipes = [v for v in schedule_variants(funcs, sources["schedule"], rules=["reduce_vec"])
               if f"reduction {block} " in v.description]
    assert recipes
    for v in recipes:
        scheduled, _, failed = replay_schedule(funcs, v.text)
        assert not failed
        blocks = re.findall(r'T\.sblock\("(\w+)"\)', "\n".join(f.script() for f in scheduled.values()))
        if kept:
            assert kept in blocks, v.description
        else:
            assert "T_power" not in blocks, v.description
        for shape in task.small_shapes:
            ok, why = run_once(llvm, task, {**sources, "schedule": v.text}, shape)
            assert ok, (v.description, shape, why)


def test_graph_proposals_replay_the_parents_schedule_on_the_new_graph(llvm):
    """A graph proposal of a scheduled candidate carries the parent's schedule
    replayed on the new graph: under ``rows`` rmsnorm's ``fused_mean_...``
    PrimFunc is ``fused_power_fused_mean_...``, and the schedule kept as it was
    named a PrimFunc that no longer exists (compile_error in a quick start)."""
    from types import SimpleNamespace

    from kstrata.agents.base import ProposeContext
    from kstrata.agents.builtin import TVMRulesProposer
    from kstrata.backends.tvm.schedule import render_schedule

    task = resolve_task("rmsnorm")
    start = llvm.initial_sources(task)
    old = "fused_mean_add_tir_rsqrt_multiply_multiply1"
    assert old in llvm.lower(task, start, task.small_shapes[0]).funcs
    schedule = render_schedule({old: ['b = sch.get_sblock("T_multiply", func_name="main")',
                                      "loops = sch.get_loops(b)", "sch.reorder(loops[-1], loops[-2])"]})
    parent = SimpleNamespace(sources={**start, "schedule": schedule}, hash="p0")
    batch = TVMRulesProposer(llvm, tune_trials=0).propose(
        task, parent, None, "graph", context=ProposeContext(backend="tvm-llvm", levels=("graph", "schedule")))
    rows = next(p for p in batch.proposals if "-> rows" in p.rationale)
    assert f"def schedule_{old}(" not in rows.sources["schedule"]
    assert "replay" in rows.metadata
    for shape in task.small_shapes:
        ok, why = run_once(llvm, task, dict(rows.sources), shape)
        assert ok, (shape, why)
