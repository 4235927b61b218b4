"""The built-in GPU schedule variants build, and compute the reference, at the
verifier's test shapes, not only at the nominal shape they are written at.

On the H200 (2026-12-05, benchmarks/results/gpu_tvm_cuda_unit_reduction.txt)
every tvm-cuda candidate of cross_entropy past the start was a compile error
on a hidden test: at C=1 (the size-1 test) TVM's lowering drops the unit
reduction loops that a gpu_rows or dlight schedule written at C=32000 splits
and binds. The same check on the CPU found mean_dim's row variants failing at
13 of its 19 test shapes and the rmsnorm square rewrite's schedule naming a
PrimFunc that D=1 numbers otherwise. Variants now start with
``if not unit_reductions(sch):``, a row recipe is not offered where a
statistic is per column, a renumbered PrimFunc takes its schedule, and an
expansion keeps only variants that build at the task's public, sweep and
size-1 shapes. The shapes checked here are the verifier's own hidden plan for
a secret the expansion never sees.
"""

from __future__ import annotations

import pytest
import tvm
from tvm.s_tir import Schedule

from kstrata.backends.registry import get_backend
from kstrata.backends.tvm.coverage import run_once
from kstrata.backends.tvm.gpu_rules import RECIPES, gpu_variants
from kstrata.backends.tvm.graph_rules import rewrites
from kstrata.backends.tvm.isolated import schedule_expansion
from kstrata.backends.tvm.schedule import render_schedule, replay_schedule
from kstrata.tasks.loader import resolve_task
from kstrata.verify import plan
from kstrata.verify.residue_probes import residue_tests

SECRET = "a secret the proposer does not know"


def _verifier_shapes(task):
    """The shapes of the full-scope plan for :data:`SECRET` that only the verifier
    knows (perturbed, size-1, octave, residue); the public and sweep shapes are the
    expansion's own check."""
    base = task.sweep_shapes
    extra = plan.perturbed_shapes(task, SECRET, base=base)
    tests = plan.hidden_tests(task, SECRET, extra, base=[])
    tests += plan.unit_tests(task, SECRET, base, extra) + plan.octave_tests(task, SECRET, base, extra)
    tests += residue_tests(task, SECRET, base, extra)
    out = []
    for t in tests:
        if t.shape_dict not in out and t.shape_dict not in [*base, *task.small_shapes]:
            out.append(t.shape_dict)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param("cross_entropy", marks=pytest.mark.heavy), "mean_dim"])
def test_every_variant_of_an_expansion_builds_at_every_shape_the_verifier_tests(name):
    """cross_entropy's expansion (43 s of CI's 20 minutes) runs under ``pytest -m heavy``. In CI:
    ``mean_dim`` here (the same filter and every-shape build), cross_entropy's own verifier shapes
    (the size-1 ones included) for its ``gpu_online`` variants in
    :func:`test_the_one_pass_cross_entropy_variants_build_at_every_verifier_shape_and_compile_with_nvcc`,
    and its row variant at C=1 run on PoCL in
    :func:`test_a_row_variant_at_a_size_one_reduction_computes_the_reference_on_opencl`."""
    cuda, task = get_backend("tvm-cuda"), resolve_task(name)
    sources = cuda.initial_sources(task)
    variants, _ = schedule_expansion(task, sources, "tvm-cuda", gpu=True)
    assert variants  # the filter left something to propose
    shapes = _verifier_shapes(task)
    assert any(1 in s.values() for s in shapes)  # the size-1 tests are among them
    for v in variants:
        for shape in shapes:
            cuda.generate_source(task, {**sources, "schedule": v["text"]}, task.full_shape(shape))


@pytest.mark.parametrize("name, shape", [("cross_entropy", {"B": 3, "C": 1}), ("rmsnorm", {"B": 3, "D": 1})])
def test_a_row_variant_at_a_size_one_reduction_computes_the_reference_on_opencl(name, shape):
    """The variant made at the nominal shape, run on PoCL (this CPU) where its every
    reduction has one element: the guard's unit schedule, then the reference."""
    opencl, task = get_backend("tvm-opencl"), resolve_task(name)
    sources = opencl.initial_sources(task)
    funcs = opencl.lower(task, sources, task.nominal_shape).funcs
    rows = gpu_variants(funcs, sources["schedule"], opencl.target(), rules=["gpu_rows"])
    assert rows
    v = rows[0]
    assert "if not unit_reductions(sch):" in v.text
    for at in (shape, task.small_shapes[-1]):  # and a shape where the recipe itself runs
        ok, why = run_once(opencl, task, {**sources, "schedule": v.text}, task.full_shape(at))
        assert ok, f"{name} at {at}, {v.description}: {why}"


def test_no_row_recipe_for_a_statistic_per_column():
    """mean_dim reduces the middle axis of (B, R, D): a sum per (b, d), not per row.
    The row recipe fused the columns with the reduction across the threads; it
    built at the nominal shape and failed at 13 of the 19 test shapes."""
    cuda, task = get_backend("tvm-cuda"), resolve_task("mean_dim")
    funcs = cuda.lower(task, cuda.initial_sources(task), task.nominal_shape).funcs
    for func in funcs.values():
        assert list(RECIPES["gpu_rows"](Schedule(tvm.IRModule({"main": func})), cuda.target())) == []
    softmax = resolve_task("softmax")
    funcs = cuda.lower(softmax, cuda.initial_sources(softmax), softmax.nominal_shape).funcs
    assert any(list(RECIPES["gpu_rows"](Schedule(tvm.IRModule({"main": f})), cuda.target())) for f in funcs.values())


def test_a_schedule_applies_to_its_primfunc_numbered_otherwise_at_another_shape():
    """rmsnorm's square rewrite names its PrimFunc ``..._multiply1_multiply2`` at the
    nominal shape and ``..._multiply_multiply1`` at D=1 (Relax numbers operators by count)."""
    cuda, task = get_backend("tvm-cuda"), resolve_task("rmsnorm")
    graph = next(g for rule, g, _ in rewrites(cuda.initial_sources(task)["graph"]) if rule == "square")
    src = {**cuda.initial_sources(task), "graph": graph, "schedule": render_schedule({})}
    nominal = cuda.lower(task, src, task.nominal_shape).funcs
    unit = cuda.lower(task, src, task.full_shape({"B": 3, "D": 1})).funcs
    (name,) = [n for n in nominal if "mean" in n]
    (there,) = [n for n in unit if "mean" in n]
    assert name != there  # the numbering differs; the test means nothing otherwise
    text = render_schedule({name: ["b = sch.get_sblock('root', func_name='main')"]})
    _, applied, failed = replay_schedule(unit, text)
    assert not failed
    assert any(f"applied to {there!r}" in s.code for s in applied)
    with pytest.raises(Exception, match="no PrimFunc named"):  # a name nothing here matches stays an error
        replay_schedule(unit, render_schedule({"fused_nothing_like_it": ["pass"]}), strict=True)


def _online(backend, task):
    """cross_entropy's sources with the one-pass log-softmax + gather rewrite and
    its ``gpu_online`` variants in the proposer's order (``gpu_variants``)."""
    src = backend.initial_sources(task)
    graph = next(g for rule, g, _ in rewrites(src["graph"], gpu=True) if rule == "log_softmax_gather_online")
    base = {**src, "graph": graph, "schedule": render_schedule({})}
    funcs = backend.lower(task, base, task.nominal_shape).funcs
    return base, gpu_variants(funcs, base["schedule"], backend.target())


def _nvcc_compiles(sources: list[str], tmp_path) -> None:
    """Each CUDA C text compiles for sm_90 (one nvcc call for all, a cubin each)."""
    import shutil
    import subprocess

    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    names = []
    for i, text in enumerate(sources):
        (tmp_path / f"k{i}.cu").write_text(text)
        names.append(f"k{i}.cu")
    done = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", *names], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert all((tmp_path / f"k{i}.cubin").stat().st_size > 0 for i in range(len(sources)))


def test_the_one_pass_cross_entropy_variants_come_first_and_only_on_a_gpu():
    """The rewrite that reads a row once (online max and sum) is the first the
    GPU proposer offers for cross_entropy, its first two schedules are
    ``gpu_online`` (the GPU suite evaluates the start and those two), and a
    CPU target is offered neither the rewrite nor the recipe."""
    from kstrata.backends.tvm.rules import graph_variants, schedule_variants

    cuda, llvm, task = get_backend("tvm-cuda"), get_backend("tvm-llvm"), resolve_task("cross_entropy")
    graph = cuda.initial_sources(task)["graph"]
    assert [r for r, _, _ in rewrites(graph, gpu=True)][:1] == ["log_softmax_gather_online"]
    assert "log_softmax_gather_online" not in [r for r, _, _ in rewrites(graph)]
    assert "log_softmax_gather_online" not in [v.rule for v in graph_variants(graph, gpu=False)]
    assert graph_variants(graph, gpu=True)[0].rule == "log_softmax_gather_online"
    _, variants = _online(cuda, task)
    assert [v.rule for v in variants[:2]] == ["gpu_online", "gpu_online"]
    assert "512 threads" in variants[0].description and "1024 threads" in variants[1].description
    src = llvm.initial_sources(task)
    funcs = llvm.lower(task, src, task.small_shapes[0]).funcs
    assert all(v.rule != "gpu_online" for v in schedule_variants(funcs, src.get("schedule", ""), gpu=False))


@pytest.mark.parametrize("shape", [{"B": 3, "C": 1}, {"B": 2, "C": 2049}, {"B": 5, "C": 77}])
def test_the_one_pass_cross_entropy_computes_the_reference_on_opencl(shape):
    """The online max and sum (lanes past the row's end, a row shorter than the
    lanes, one column) give the reference's loss on PoCL, for the two variants
    proposed first."""
    opencl, task = get_backend("tvm-opencl"), resolve_task("cross_entropy")
    base, variants = _online(opencl, task)
    for v in variants[:2]:
        ok, why = run_once(opencl, task, {**base, "schedule": v.text}, task.full_shape(shape))
        assert ok, f"{v.description} at {shape}: {why}"


@pytest.mark.slow
def test_the_one_pass_cross_entropy_variants_build_at_every_verifier_shape_and_compile_with_nvcc(tmp_path):
    """Every ``gpu_online`` variant generates CUDA at every shape the verifier
    tests, normal and poison builds (kstrata's uninitialised-memory check); the
    two proposed first compile with nvcc for sm_90 at the size-1 and nominal
    shapes, poison builds included. The proposer's own check (the expansion's
    filter) keeps them. Pattern 2's build (the same poison pass as pattern 1's,
    another fill constant: :mod:`kstrata.backends.tvm.poison`) is made only where
    nvcc compiles it: the other third of the builds was ~20 s of CI's 20 minutes."""
    from kstrata.backends.tvm import build as tb

    cuda, task = get_backend("tvm-cuda"), resolve_task("cross_entropy")
    base, variants = _online(cuda, task)
    online = [v for v in variants if v.rule == "gpu_online"]
    assert len(online) == 4
    kept, _ = schedule_expansion(task, base, "tvm-cuda", gpu=True)
    assert [v["rule"] for v in kept[:2]] == ["gpu_online", "gpu_online"]
    shapes = _verifier_shapes(task)
    assert any(1 in s.values() for s in shapes)
    to_compile = []
    for n, v in enumerate(online):
        src = {**base, "schedule": v.text}
        for shape in shapes + [task.nominal_shape]:
            _, funcs, _, _ = cuda.scheduled_funcs(task, src, task.full_shape(shape))
            compiled = n < 2 and (shape == task.nominal_shape or 1 in shape.values())
            for poison in (0, 1, 2) if compiled else (0, 1):
                with tb.codegen_only(cuda.target()):
                    code = tb.generated_source(tb.build_module(funcs, cuda.target(), poison=poison), "cuda")
                if compiled:
                    to_compile.append(code)
    _nvcc_compiles(to_compile, tmp_path)
