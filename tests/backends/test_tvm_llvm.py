"""tvm-llvm: lowering, the three editable levels, replay reports, rules."""

from __future__ import annotations

import pytest
import torch

from kstrata.backends.base import CandidateLoadError
from kstrata.backends.registry import get_backend
from kstrata.backends.tvm.coverage import check_task, run_once
from kstrata.backends.tvm.lower import with_fusion
from kstrata.backends.tvm.rules import graph_variants, schedule_variants
from kstrata.backends.tvm.schedule import render_schedule
from kstrata.tasks.loader import resolve_task, suite

REPRESENTATIVE = ["rmsnorm", "softmax", "matmul_square", "gelu", "layernorm", "transpose"]


@pytest.fixture(scope="module")
def llvm():
    return get_backend("tvm-llvm")


@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_initial_candidate_matches_reference(llvm, name):
    task = resolve_task(name)
    outcome = check_task(llvm, task, task.small_shapes)
    assert outcome.status == "ok", outcome.reason


def test_graph_is_symbolic_and_serves_sweep_shapes(llvm):
    task = resolve_task("rmsnorm")
    sources = llvm.initial_sources(task)
    assert "# shape: symbolic" in sources["graph"]
    for shape in task.sweep_shapes[:2]:
        ok, why = run_once(llvm, task, sources, shape)
        assert ok, why


def test_schedule_edit_changes_loops_and_stays_correct(llvm):
    task = resolve_task("rmsnorm")
    shape = task.small_shapes[0]
    sources = llvm.initial_sources(task)
    schedule = render_schedule({"power": [
        'b = sch.get_sblock("T_power", func_name="main")',
        "i, j = sch.get_loops(b)",
        "jo, ji = sch.split(j, factors=[None, 16])",
        "sch.parallel(i)",
        "sch.vectorize(ji)",
    ]})
    edited = {**sources, "schedule": schedule}
    _, funcs, applied, failed = llvm.scheduled_funcs(task, edited, shape)
    assert not failed and len(applied) == 5
    script = funcs["power"].script()
    assert "T.parallel" in script and "T.vectorized" in script
    ok, why = run_once(llvm, task, edited, shape)
    assert ok, why


def test_bad_schedule_is_a_load_error(llvm):
    task = resolve_task("rmsnorm")
    sources = {**llvm.initial_sources(task),
               "schedule": render_schedule({"power": ['sch.get_sblock("nope", func_name="main")']})}
    model, inputs, init, _ = task.instantiate(task.small_shapes[0])
    with pytest.raises(CandidateLoadError, match="nope"):
        llvm.load(task, sources, task.small_shapes[0], init)


def test_source_edit_builds_and_is_what_runs(llvm):
    task = resolve_task("relu")
    shape = task.small_shapes[0]
    sources = llvm.initial_sources(task)
    code = llvm.generate_source(task, sources, shape)
    ok, why = run_once(llvm, task, {**sources, "source": code}, shape)
    assert ok, why
    import re

    assert re.search(r"fcmp (reassoc )?ogt", code)  # the llvm target's fast-math flag (build.LLVM_FAST_MATH)
    edited = re.sub(r"fcmp (reassoc )?ogt", r"fcmp \1olt", code)  # relu(x) -> min(x, 0)
    model, inputs, init, _ = task.instantiate(shape, 0)
    fn = llvm.load(task, {**sources, "source": edited}, shape, init)
    assert torch.equal(fn(*inputs), torch.clamp(inputs[0], max=0))


def test_llvm_source_is_shape_generic(llvm):
    task = resolve_task("rmsnorm")
    sources = llvm.initial_sources(task)
    code = llvm.generate_source(task, sources, task.small_shapes[0])
    assert "shape=symbolic" in code.splitlines()[0]
    for shape in [task.small_shapes[-1], task.sweep_shapes[0]]:
        ok, why = run_once(llvm, task, {**sources, "source": code}, shape)
        assert ok, (shape, why)


def test_static_build_source_for_another_shape_is_refused(llvm):
    task = resolve_task("relu")
    sources = llvm.initial_sources(task)
    static = {**sources, "graph": sources["graph"].replace("# build: symbolic", "# build: static")}
    assert static["graph"] != sources["graph"]
    code = llvm.generate_source(task, static, task.small_shapes[0])
    assert '"shape=symbolic"' not in code and "shape={" in code.splitlines()[0]
    ok, why = run_once(llvm, task, {**static, "source": code}, task.small_shapes[0])
    assert ok, why
    other = task.small_shapes[1] if len(task.small_shapes) > 1 else task.sweep_shapes[0]
    _, _, init, _ = task.instantiate(other)
    with pytest.raises(CandidateLoadError, match="specialized"):
        llvm.load(task, {"source": code}, other, init)
    ok, why = run_once(llvm, task, static, other)  # graph+schedule rebuild per shape
    assert ok, why


def test_one_build_serves_every_shape(llvm, monkeypatch):
    """Graph+schedule loads at several shapes compile once (symbolic build, in-process cache)."""
    from kstrata.backends.tvm import backend as tvm_backend
    from kstrata.backends.tvm import build as tb

    task = resolve_task("rmsnorm")
    sources = llvm.initial_sources(task)
    schedule = render_schedule({"power": [
        'b = sch.get_sblock("T_power", func_name="main")',
        "i, j = sch.get_loops(b)",
        "jo, ji = sch.split(j, factors=[None, 16])",  # a factor that need not divide the size
        "sch.parallel(i)",
        "sch.vectorize(ji)",
    ]})
    edited = {**sources, "schedule": schedule}
    monkeypatch.setattr(tvm_backend, "_CACHE", type(tvm_backend._CACHE)())
    calls = []
    real = tb.build_module
    monkeypatch.setattr(tb, "build_module", lambda *a, **k: calls.append(1) or real(*a, **k))
    shapes = [*task.small_shapes, *task.sweep_shapes[:2]]
    for shape in shapes:
        ok, why = run_once(llvm, task, edited, shape)
        assert ok, (shape, why)
    assert len(calls) == 1
    static = {**edited, "graph": edited["graph"].replace("# build: symbolic", "# build: static")}
    for shape in shapes[:2]:
        ok, why = run_once(llvm, task, static, shape)
        assert ok, why
    assert len(calls) == 3


def test_graph_change_replay_reports_failed_steps(llvm):
    task = resolve_task("rmsnorm")
    shape = task.small_shapes[0]
    sources = llvm.initial_sources(task)
    fused = [n for n in llvm.lower(task, sources, shape).funcs if n.startswith("fused_")][0]
    schedule = render_schedule({
        "power": ['b = sch.get_sblock("T_power", func_name="main")', "i, j = sch.get_loops(b)",
                  "sch.parallel(i)"],
        fused: ['b = sch.get_sblock("T_multiply1", func_name="main")', "i, j = sch.get_loops(b)",
                "sch.parallel(i)"],
    })
    unfused = {"graph": with_fusion(sources["graph"], "none"), "schedule": schedule}
    _, funcs, applied, failed = llvm.scheduled_funcs(task, unfused, shape, strict=False)
    assert [s.func for s in failed] == [fused]  # the fused PrimFunc no longer exists
    assert len(applied) == 3  # the power steps still apply
    _, _, init, _ = task.instantiate(shape)
    with pytest.raises(CandidateLoadError, match="no PrimFunc named"):  # load is strict
        llvm.load(task, unfused, shape, init)


def test_rules_produce_correct_variants(llvm):
    task = resolve_task("matmul_square")
    shape = task.small_shapes[0]
    sources = llvm.initial_sources(task)
    variants = schedule_variants(llvm.lower(task, sources, shape).funcs, sources["schedule"])
    rules = {v.rule for v in variants}
    assert {"parallel_vectorize", "tile", "unroll", "cache_write", "gemm_tile"} <= rules
    for v in variants:
        ok, why = run_once(llvm, task, {**sources, "schedule": v.text}, shape)
        assert ok, (v.description, why)
    graphs = graph_variants(sources["graph"])
    assert [g.rule for g in graphs] == ["build", "fusion"]
    assert "# build: static" in graphs[0].text and "# build: symbolic" in sources["graph"]
    for g in graphs:
        ok, why = run_once(llvm, task, {"graph": g.text, "schedule": sources["schedule"]}, shape)
        assert ok, (g.description, why)
    # a composite recipe on the static graph: built per shape, still correct there
    gemm = next(v for v in variants if v.rule == "gemm_tile")
    ok, why = run_once(llvm, task, {"graph": graphs[0].text, "schedule": gemm.text}, shape)
    assert ok, why


@pytest.fixture(scope="module")
def judge(llvm):
    """One judge worker for the verifier tests (as ``kstrata optimize`` keeps one)."""
    from kstrata.backends.workers import pool_for

    p = pool_for(llvm)
    yield p
    p.close()


# w4a16_gemv and scaled_matmul_softmax (41 s and 25 s of CI's 20 minutes) run under pytest -m heavy
@pytest.mark.parametrize("name", ["cumsum", "softmax_fp16", *[pytest.param(n, marks=pytest.mark.heavy)
                                                             for n in ("w4a16_gemv", "scaled_matmul_softmax")]])
def test_frontend_additions_pass_the_verifier(llvm, judge, name):
    """Tasks that need kstrata's converters (cumsum as TE, rshift, fp16 softmax in
    fp32) or the shape-dependent-constant check (scaled_matmul_softmax)."""
    from kstrata.verify import verify_candidate

    task = resolve_task(name)
    ev = verify_candidate(task, "tvm-llvm", llvm.initial_sources(task), secret="x", scope="small", pool=judge)
    assert ev.correct, (ev.verdict, ev.evidence)


#: the suite tasks whose TVM build takes 12-19 s each (pytest -m heavy runs them)
HEAVY_BUILDS = ("transformer_block", "transformer_block_bf16", "small_convnet")


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(t.name, marks=pytest.mark.heavy) if t.name in HEAVY_BUILDS else t.name
                                  for t in suite()])
def test_every_suite_task(llvm, name):
    task = resolve_task(name)
    outcome = check_task(llvm, task, task.small_shapes[:1])
    assert outcome.status == "ok", outcome.reason


def test_static_exported_graph_marked_by_the_tuner_loads_at_another_shape(llvm):
    """A graph torch.export specialized (sdpa_fp16) with its build line changed
    (as MetaSchedule's tuned sources are) is re-exported at a new shape, not refused."""
    import re

    task = resolve_task("sdpa_fp16")
    src = llvm.initial_sources(task)
    assert "# shape: static" in src["graph"]
    marked = {**src, "graph": re.sub(r"^# build:.*$", "# build: static", src["graph"], count=1, flags=re.M)}
    shape = {"B": 1, "H": 2, "S": 9, "D": 16}
    ok, why = run_once(llvm, task, marked, shape)
    assert ok, why


@pytest.mark.parametrize("name,rule,expect", [
    ("max_dim", "reduce_vec", ["contiguous axis: rfactor by 16", "contiguous axis: rfactor by 8"]),
    ("mean_dim", "reduce_vec", ["strided axis", "strided axis"]),  # + the divide computed per row
    ("conv2d", "conv_tile", ["4 channels", "8 channels"]),  # output channels per register block
    # rfactor'd row reductions: at D=77 (no multiple of the lanes) they must not rfactor
    # (TVM 0.27's rfactor with a tail predicate computed wrong softmax rows)
    ("softmax", "fuse_rows", ["by 16) + reductions vectorized by rfactor", "by 8) + reductions vectorized by rfactor",
                              "inner loop by 16", "inner loop by 8", "computed per row"]),
])
def test_recipes_for_reductions_and_convolutions_are_correct(llvm, name, rule, expect):
    """The reduction and convolution recipes apply to their tasks (static build,
    a small shape) and every variant they give computes the reference's result."""
    from kstrata.backends.tvm.lower import with_build

    task = resolve_task(name)
    shape = task.small_shapes[0]
    sources = llvm.initial_sources(task)
    sources["graph"] = with_build(sources["graph"], "static")
    variants = schedule_variants(llvm.lower(task, sources, shape).funcs, sources["schedule"], rules=[rule])
    for what in expect:
        assert any(what in v.description for v in variants), (what, [v.description for v in variants])
    assert len(variants) == len(expect), [v.description for v in variants]
    for v in variants:
        for each in task.small_shapes:
            ok, why = run_once(llvm, task, {**sources, "schedule": v.text}, each)
            assert ok, (v.description, each, why)


def test_recipes_on_every_primfunc_at_once(llvm):
    """A task lowered to several PrimFuncs (w4a16: dequantize, then GEMM) gets
    variants that schedule all of them in one candidate, first, and correct."""
    from kstrata.backends.tvm.lower import with_build

    task = resolve_task("w4a16_gemm")
    shape = task.small_shapes[0]
    sources = llvm.initial_sources(task)
    sources["graph"] = with_build(sources["graph"], "static")
    funcs = llvm.lower(task, sources, shape).funcs
    variants = schedule_variants(funcs, sources["schedule"])
    combined = [v for v in variants if v.func == "*"]
    assert combined and variants[:len(combined)] == combined
    first = combined[0]
    assert first.rule == "fuse_rows+gemm_tile"
    assert all(f"def schedule_{f}(sch)" in first.text for f in funcs if "matmul" in f or "bitwise" in f)
    ok, why = run_once(llvm, task, {**sources, "schedule": first.text}, shape)
    assert ok, why


def test_a_large_folded_constant_is_computed_in_kernels_instead(llvm):
    """sdpa_causal's mask folds to an S*S constant at a static S; above the
    plan's limit (S=257: 66049 elements) the graph is lowered without folding."""
    from kstrata.backends.tvm.lower import lower_graph

    task = resolve_task("sdpa_causal")
    shape = {"B": 1, "H": 1, "S": 257, "D": 16}
    graph = llvm.initial_sources(task)["graph"]
    lowered = lower_graph(task, graph, shape)
    assert all(len(v[2]) <= 1 << 16 for v in lowered.plan.consts.values())
    ok, why = run_once(llvm, task, llvm.initial_sources(task), shape)
    assert ok, why


def test_specialized_graph_keeps_its_primfuncs_and_fusion_edits_across_shapes(llvm):
    """sdpa_causal's graph is exported at a static S; re-exported at other S it
    lowers to the same PrimFunc names (a schedule written at one shape applies
    at the others) and a fusion edit is carried to the re-export."""
    from kstrata.backends.tvm.lower import lower_graph, with_fusion

    task = resolve_task("sdpa_causal")
    graph = llvm.initial_sources(task)["graph"]
    small, odd = {"B": 1, "H": 2, "S": 64, "D": 32}, {"B": 1, "H": 1, "S": 300, "D": 16}
    assert sorted(lower_graph(task, graph, small).funcs) == sorted(lower_graph(task, graph, odd).funcs)
    unfused = with_fusion(graph, "none")
    assert len(lower_graph(task, unfused, odd).funcs) > len(lower_graph(task, graph, odd).funcs)
    for shape in (small, odd):
        ok, why = run_once(llvm, task, {"graph": unfused, "schedule": ""}, shape)
        assert ok, why


def test_schedule_for_a_gemm_merged_at_one_shape_still_builds(llvm):
    """sdpa's two GEMMs (QK^T and PV) lower to `matmul` and `matmul1`, but to one
    `matmul` where S == D (the two are then identical). A schedule written at a
    shape with both (the rules' GEMM tiling names each) must still build there:
    the twin is skipped, not a compile error (8 of 10 sdpa_fp16 candidates of
    an optimize_suite run were compile errors at a hidden S == D shape)."""
    from kstrata.backends.tvm.lower import lower_graph, with_fusion
    from kstrata.backends.tvm.schedule import render_schedule, replay_schedule

    task = resolve_task("sdpa_fp16")
    graph = with_fusion(llvm.initial_sources(task)["graph"], "none")
    apart, same = {"B": 1, "H": 2, "S": 24, "D": 16}, {"B": 1, "H": 2, "S": 16, "D": 16}
    assert {"matmul", "matmul1"} <= set(lower_graph(task, graph, apart).funcs)
    merged = lower_graph(task, graph, same).funcs
    assert "matmul" in merged and "matmul1" not in merged
    tile = ['b = sch.get_sblock("matmul", func_name="main")', "loops = sch.get_loops(b)",
            "sch.parallel(loops[0])"]
    schedule = render_schedule({"matmul": tile, "matmul1": tile})
    _, applied, failed = replay_schedule(merged, schedule)
    assert not failed and any("schedule_matmul1 skipped" in s.code for s in applied)
    for shape in (apart, same):
        ok, why = run_once(llvm, task, {"graph": graph, "schedule": schedule}, shape)
        assert ok, why
    # a name that exists at no shape is still an error
    _, _, failed = replay_schedule(merged, render_schedule({"softmax7x": tile}))
    assert failed and "no PrimFunc named 'softmax7x'" in failed[0].error
