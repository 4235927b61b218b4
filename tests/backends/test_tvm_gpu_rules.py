"""The built-in proposer's GPU schedule recipes (kstrata.backends.tvm.gpu_rules),
checked on the CPU with TVM's CUDA code generation (and nvcc where installed):
no CPU rule for a GPU target, every variant thread-bound and building at the
nominal shape and at the task's small (verification) shapes, neighbours of
the candidate's own variant first."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from kstrata.agents.base import ProposeContext
from kstrata.agents.builtin import TVMRulesProposer
from kstrata.backends.registry import get_backend
from kstrata.backends.tvm import build as tb
from kstrata.backends.tvm.gpu_rules import RECIPES, gpu_variants
from kstrata.backends.tvm.rules import RULES, schedule_variants
from kstrata.backends.tvm.schedule import schedule_lines
from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task

#: CPU-only schedule primitives (a GPU kernel's loops are bound to threads instead)
CPU_ONLY = re.compile(r"\bsch\.parallel\(")


@pytest.fixture(scope="module")
def cuda():
    return get_backend("tvm-cuda")


def _variants(cuda, name, schedule=None):
    task = resolve_task(name)
    sources = cuda.initial_sources(task)
    if schedule is not None:
        sources = {**sources, "schedule": schedule}
    funcs = cuda.lower(task, sources, task.nominal_shape).funcs
    return task, sources, schedule_variants(funcs, sources["schedule"], gpu=True, target="cuda")


#: tasks whose every variant test_every_variant_builds_at_an_odd_shape builds at the odd small shape
ODD_SHAPE_TASKS = ["softmax", "layernorm", "matmul_bias_relu", "sum_dim"]


@pytest.mark.parametrize("name, recipe", [("softmax", "gpu_rows"), ("rmsnorm", "gpu_rows"),
                                          ("relu", "gpu_elementwise"), ("sum_dim", "gpu_reduce"),
                                          ("matmul_bias_relu", "gpu_gemm"), ("matmul_batched", "gpu_gemm")])
def test_every_variant_is_a_gpu_schedule_that_builds_at_every_shape(cuda, name, recipe):
    task, sources, variants = _variants(cuda, name)
    assert variants and {v.rule for v in variants} <= set(RECIPES)
    assert recipe in {v.rule for v in variants}
    assert not set(RECIPES) & set(RULES)  # the CPU rules are another family
    for v in variants:
        assert not CPU_ONLY.search(v.text), (v.rule, v.description)
        assert "threadIdx" in "\n".join(schedule_lines(v.text)[v.func]) or v.rule == "dlight"
    # one variant per recipe, replayed by the backend (dlight for the PrimFuncs it does not
    # name) at the nominal shape and at every small shape the verifier runs (the odd last one
    # is left to test_every_variant_builds_at_an_odd_shape where it builds every variant there)
    shapes = [task.nominal_shape, *task.small_shapes]
    if name in ODD_SHAPE_TASKS and len(shapes) > 2:
        shapes = shapes[:-1]
    for rule in sorted({v.rule for v in variants}):
        v = next(v for v in variants if v.rule == rule)
        for shape in shapes:
            _, funcs, _, failed = cuda.scheduled_funcs(task, {**sources, "schedule": v.text}, shape)
            assert not failed
            tb.build_module(funcs, cuda.target())


@pytest.mark.slow
@pytest.mark.parametrize("name", ODD_SHAPE_TASKS)
def test_every_variant_builds_at_an_odd_shape(cuda, name):
    """Variants are made at the nominal shape and replayed at the verifier's:
    each one must build at the small shape whose sizes divide nothing."""
    task, sources, variants = _variants(cuda, name)
    shape = task.small_shapes[-1]
    for v in variants:
        _, funcs, _, failed = cuda.scheduled_funcs(task, {**sources, "schedule": v.text}, shape)
        assert not failed, v.description
        tb.build_module(funcs, cuda.target())


def test_vector_loads_and_stores_fall_back_where_the_width_does_not_divide(cuda):
    task, sources, variants = _variants(cuda, "softmax")
    vec = [v for v in variants if "and stores 4 wide" in v.description]
    assert vec
    # at the nominal shape (rows of 4096) every thread reads and writes float4s
    _, funcs, _, _ = cuda.scheduled_funcs(task, {**sources, "schedule": vec[0].text}, task.nominal_shape)
    code = tb.generated_source(tb.build_module(funcs, cuda.target()), "cuda")
    assert code.count("float4") >= 3  # two reductions' loads and the store
    shape = {**task.nominal_shape, **{k: 77 for k, val in task.nominal_shape.items() if val > 64}}
    for v in vec[:3]:
        _, funcs, _, failed = cuda.scheduled_funcs(task, {**sources, "schedule": v.text}, shape)
        assert not failed
        code = tb.generated_source(tb.build_module(funcs, cuda.target()), "cuda")
        assert "__global__" in code


def test_reductions_load_4_wide_where_4_divides_the_row_but_the_threads_times_4_do_not(cuda):
    """A row of 1000 (cross_entropy's 32000 too) is no multiple of 512 x 4: the
    reductions' loads were scalar there; the thread loop is now the one predicated,
    each thread's 4 lanes one float4 load."""
    task, sources, variants = _variants(cuda, "softmax")
    v = next(v for v in variants if v.rule == "gpu_rows" and "512 threads" in v.description
             and "4 wide" in v.description and "shared" not in v.description)
    shape = {"B": 8, "D": 1000}
    _, funcs, _, failed = cuda.scheduled_funcs(task, {**sources, "schedule": v.text}, shape)
    assert not failed
    code = tb.generated_source(tb.build_module(funcs, cuda.target()), "cuda")
    assert len(re.findall(r"= \*\(float4\*\)\(x_ptr", code)) >= 2  # the max's and the sum's loads


def test_neighbours_of_the_candidates_own_variant_come_first(cuda):
    _, _, variants = _variants(cuda, "softmax")
    start = next(v for v in variants if v.rule == "gpu_rows" and "512 threads" in v.description
                 and "wide, unroll 0" in v.description and "and stores 1 wide" in v.description)
    _, _, again = _variants(cuda, "softmax", schedule=start.text)
    assert start.text not in {v.text for v in again}
    first = again[:4]
    assert all(v.rule == "gpu_rows" for v in first)

    def params(v):
        m = re.search(r"(\d+) threads.*and stores (\d+) wide, unroll (\d+)", v.description)
        return (*m.groups(), "staged once in shared memory" in v.description)

    p0 = params(start)
    assert all(sum(a != b for a, b in zip(params(v), p0)) == 1 for v in first)


def test_no_unbound_cpu_step_reaches_a_gpu_target(cuda):
    """The rules that made runtime errors on the H200 (an inline or an unroll on
    an unscheduled PrimFunc, leaving its loops unbound) are not proposed there."""
    _, _, variants = _variants(cuda, "rmsnorm")
    assert not {"inline", "unroll", "parallel_vectorize", "fuse_rows"} & {v.rule for v in variants}


@pytest.mark.skipif(tb.nvcc_path() is None, reason="nvcc not installed")
@pytest.mark.parametrize("name, rule, words", [("softmax", "gpu_rows", "and stores 4 wide"),
                                               ("layernorm", "gpu_rows", "staged once in shared memory"),
                                               ("matmul_bias_relu", "gpu_gemm", "128x128")])
def test_a_variant_compiles_with_nvcc(cuda, name, rule, words):
    task, sources, variants = _variants(cuda, name)
    v = next(v for v in variants if v.rule == rule and words in v.description)
    code = cuda.generate_source(task, {**sources, "schedule": v.text}, task.small_shapes[-1])
    ptx = tb.nvcc_compile(code, arch="sm_90", fmt="ptx")
    # threads of a block cooperate (a row's reductions, a GEMM's shared tiles)
    assert b".entry" in ptx and b"bar.sync" in ptx


@pytest.mark.slow
@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
def test_builtin_proposer_on_tvm_cuda_proposes_gpu_recipes_only(cuda, tmp_path, monkeypatch):
    monkeypatch.setenv("KSTRATA_CACHE", str(tmp_path / "cache"))
    task = resolve_task("softmax")
    proposer = TVMRulesProposer(cuda)
    root = SimpleNamespace(sources=cuda.initial_sources(task), hash="root")
    ctx = ProposeContext(backend=cuda.name, levels=cuda.levels, seed=0, step=0)
    batch = proposer.propose(task, root, None, "schedule", context=ctx)
    assert len(batch.proposals) == proposer.per_expansion
    assert all(p.metadata["rule"] in RECIPES for p in batch.proposals)
    assert len({p.metadata["rule"] for p in batch.proposals}) >= 2  # more than one recipe on the first try
    assert not proposer._tuned_graphs  # no MetaSchedule on a GPU target from the CPU


def test_gpu_variants_of_an_unknown_recipe_name_are_none(cuda):
    task = resolve_task("relu")
    funcs = cuda.lower(task, cuda.initial_sources(task), task.small_shapes[0]).funcs
    assert gpu_variants(funcs, "", cuda.target(), rules=["tile"]) == []


def test_metaschedule_is_asked_on_tvm_cuda_only_with_a_usable_gpu(cuda, monkeypatch):
    from kstrata.backends.base import Availability
    from kstrata.backends.tvm import isolated

    asked = []

    def fake_expansion(task, sources, backend, *, gpu=False, tune=None, **kw):
        asked.append((backend, gpu, tune))
        return [], None

    monkeypatch.setattr(isolated, "schedule_expansion", fake_expansion)
    task = resolve_task("relu")
    root = SimpleNamespace(sources=cuda.initial_sources(task), hash="root")
    ctx = ProposeContext(backend=cuda.name, levels=cuda.levels, seed=0, step=0)
    monkeypatch.setattr(type(cuda), "availability", lambda self: Availability(False, "no GPU"))
    TVMRulesProposer(cuda).propose(task, root, None, "schedule", context=ctx)
    monkeypatch.setattr(type(cuda), "availability", lambda self: Availability(True, ""))
    TVMRulesProposer(cuda).propose(task, root, None, "schedule", context=ctx)
    assert [a[2] is None for a in asked] == [True, False]
    assert all(a[:2] == ("tvm-cuda", True) for a in asked)
    assert asked[1][2]["shape"] == task.nominal_shape  # a GPU tunes at the nominal shape


def test_no_build_switch_where_every_build_is_static(cuda):
    """tvm-cuda builds per shape whatever the graph header says: switching it
    would cost an evaluation of the same code."""
    task = resolve_task("softmax")
    root = SimpleNamespace(sources=cuda.initial_sources(task), hash="root")
    ctx = ProposeContext(backend=cuda.name, levels=cuda.levels, seed=0, step=0)

    def rules(backend):
        batch = TVMRulesProposer(backend).propose(task, root, None, "graph", context=ctx)
        return {p.metadata["rule"] for p in batch.proposals}

    assert rules(cuda) == {"fusion"}
    assert "build" in rules(get_backend("tvm-llvm"))


def test_variants_the_run_has_take_no_slot(cuda, monkeypatch):
    """All GPU recipes are whole schedules proposed in a fixed order, so without
    this a node expanded twice would propose the same four candidates again."""
    from kstrata.backends.tvm import isolated

    found = [{"text": f"# variant {i}\n", "rule": "gpu_rows", "func": "f", "description": str(i)}
             for i in range(10)]
    monkeypatch.setattr(isolated, "schedule_expansion", lambda *a, **kw: ([dict(v) for v in found], None))
    task = resolve_task("relu")
    sources = cuda.initial_sources(task)
    root = SimpleNamespace(sources=sources, hash="root")
    proposer = TVMRulesProposer(cuda, tune_trials=0)

    def propose(tree):
        ctx = ProposeContext(backend=cuda.name, levels=cuda.levels, seed=0, step=0, tree=tree)
        return [p.sources["schedule"] for p in proposer.propose(task, root, None, "schedule", context=ctx).proposals]

    first = propose([root])
    assert first == [v["text"] for v in found[:4]]
    again = propose([root, *(SimpleNamespace(sources={**sources, "schedule": t}) for t in first)])
    assert again == [v["text"] for v in found[4:8]]
    # the same schedule under another graph is another candidate
    other = propose([root, *(SimpleNamespace(sources={**sources, "graph": "x", "schedule": t}) for t in first)])
    assert other == first


def test_the_primfunc_that_moves_the_bytes_gets_the_first_variants(cuda):
    """cross_entropy (B=4096, C=32000): a row PrimFunc over the logits and three over B elements. In equal
    turns the three minor ones took the first three variants, so the H200 suite's three evaluations never
    rescheduled the PrimFunc that is the time (issue 18: its best, a rescheduled gather, at 40% of the copy
    bandwidth). Now the costliest PrimFunc's variants come first, the minor ones' after all of its."""
    from kstrata.backends.tvm.gpu_rules import MINOR_SHARE, _func_bytes

    task = resolve_task("cross_entropy")
    sources = cuda.initial_sources(task)
    funcs = cuda.lower(task, sources, task.nominal_shape).funcs
    work = {name: _func_bytes(f) for name, f in funcs.items()}
    big = max(work, key=work.get)
    assert len(funcs) > 1 and all(w < MINOR_SHARE * sum(work.values()) for n, w in work.items() if n != big)
    variants = gpu_variants(funcs, sources["schedule"], cuda.target())
    mine = [v for v in variants if v.func == big]
    assert mine and variants[:len(mine)] == mine
    assert {v.func for v in variants} == set(funcs)  # the minor ones still get theirs, after
