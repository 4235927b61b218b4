"""The built-in proposer's algebraic graph rewrites (kstrata.backends.tvm.graph_rules):
where they apply, that the rewritten graph computes the reference on tvm-llvm at
the task's shapes, and the structure of the CUDA C they give on tvm-cuda (generated
here, compiled with nvcc where installed): cross_entropy's log-softmax is never
written, rmsnorm squares without ``powf``."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from kstrata.agents.base import ProposeContext
from kstrata.agents.builtin import TVMRulesProposer
from kstrata.backends.registry import get_backend
from kstrata.backends.tvm import build as tb
from kstrata.backends.tvm.coverage import run_once
from kstrata.backends.tvm.graph_rules import log_softmax_gather, rewrites, square
from kstrata.backends.tvm.rules import graph_variants, schedule_variants
from kstrata.tasks.loader import resolve_task


@pytest.fixture(scope="module")
def cuda():
    return get_backend("tvm-cuda")


@pytest.fixture(scope="module")
def llvm():
    return get_backend("tvm-llvm")


def _graph(backend, name):
    task = resolve_task(name)
    return task, backend.initial_sources(task)


def test_rewrites_apply_where_their_pattern_is(cuda):
    _, ce = _graph(cuda, "cross_entropy")
    _, rms = _graph(cuda, "rmsnorm")
    _, soft = _graph(cuda, "log_softmax")  # its log-softmax is the output: nothing to gather
    assert [r[0] for r in rewrites(ce["graph"])] == ["log_softmax_gather"]
    assert [r[0] for r in rewrites(rms["graph"])] == ["square"]
    assert rewrites(soft["graph"]) == []
    new = log_softmax_gather(ce["graph"])
    assert "R.nn.log_softmax" not in new and "R.gather_elements" not in new
    assert new.count("R.call_tir(Module.log_softmax_gather, (logits, ") == 1
    assert log_softmax_gather(new) is None  # applied once
    sq = square(rms["graph"])
    assert "R.power" not in sq and re.search(r"R\.multiply\((\w+), \1\)", sq)
    # the log-softmax read twice (returned too) keeps its graph
    twice = ce["graph"].replace("gv: R.Tuple(R.Tensor((s88,), dtype=\"float32\")) = (lv10,)",
                                "gv: R.Tuple(R.Tensor((s88,), dtype=\"float32\")) = (lv10, lv)")
    assert twice != ce["graph"] and log_softmax_gather(twice) is None


@pytest.mark.parametrize("name", ["cross_entropy", "rmsnorm"])
def test_rewritten_graph_matches_the_reference_on_llvm(llvm, name):
    task, sources = _graph(llvm, name)
    (rule, graph, _), = rewrites(sources["graph"])
    for shape in [*task.small_shapes, *task.sweep_shapes]:
        ok, why = run_once(llvm, task, {**sources, "graph": graph}, shape)
        assert ok, f"{rule} at {shape}: {why}"


def _cuda_code(cuda, task, sources, shape):
    with tb.codegen_only(cuda.target()):
        return cuda.generate_source(task, sources, shape)


def _kernels(code):
    """{kernel name: body} of generated CUDA C."""
    out = {}
    for m in re.finditer(r'extern "C" __global__ void[^\n]*?(\w+)_kernel\([^)]*\) \{\n(.*?)\n\}', code, re.S):
        out[m[1]] = m[2]
    return out


def test_cross_entropy_reads_the_logits_in_one_kernel_and_writes_no_row(cuda):
    task, sources = _graph(cuda, "cross_entropy")
    shape = task.nominal_shape
    before = _kernels(_cuda_code(cuda, task, sources, shape))
    # the start: the whole B x C log-softmax is stored (a store indexed by the column)
    assert any(re.search(r"compute_ptr\[[^\]]*threadIdx", b) for b in before.values())
    graph = log_softmax_gather(sources["graph"])
    funcs = cuda.lower(task, {**sources, "graph": graph}, shape).funcs
    variants = schedule_variants(funcs, sources["schedule"], gpu=True, target="cuda")
    first = variants[0]
    assert (first.rule, first.func) == ("gpu_rows", "log_softmax_gather")  # the costly PrimFunc first
    # a 128 KB row no variant stages in shared memory: 512 then 1024 threads, 4 wide, lead
    assert [(re.search(r"(\d+) threads", v.description)[1], "4 wide" in v.description)
            for v in variants[:2]] == [("512", True), ("1024", True)]
    code = _cuda_code(cuda, task, {**sources, "graph": graph, "schedule": first.text}, shape)
    after = _kernels(code)
    readers = [k for k, b in after.items() if "x_ptr" in b]
    assert readers == ["log_softmax_gather"]
    body = after["log_softmax_gather"]
    # each row read by float4 loads (the max, then the sum of exponentials); one scalar store per row
    assert body.count("*(float4*)(x_ptr") == 2
    assert re.findall(r"(\w+_ptr)\[[^\]]*\] = ", body).count("out_ptr") == 1
    assert "out_ptr[((int64_t)blockIdx.x)]" in body
    if tb.nvcc_path() is not None:
        ptx = tb.nvcc_compile(code, arch="sm_90", fmt="ptx")
        assert ptx.count(b"ld.global.nc.v4.f32") >= 2


def test_rmsnorm_squares_without_powf(cuda):
    task, sources = _graph(cuda, "rmsnorm")
    shape = task.nominal_shape
    assert "powf" in _cuda_code(cuda, task, sources, shape)
    graph = square(sources["graph"])
    funcs = cuda.lower(task, {**sources, "graph": graph}, shape).funcs
    first = schedule_variants(funcs, sources["schedule"], gpu=True, target="cuda")[0]
    code = _cuda_code(cuda, task, {**sources, "graph": graph, "schedule": first.text}, shape)
    assert "powf" not in code and "float4" in code
    if tb.nvcc_path() is not None:
        ptx = tb.nvcc_compile(code, arch="sm_90", fmt="ptx").decode()
        # ~25 instructions of libdevice's powf per element before; now a multiply-add
        assert len(re.findall(r"^\s+[a-z]", ptx, re.M)) < 400


@pytest.mark.parametrize("name", ["cross_entropy", "rmsnorm"])
def test_the_first_schedule_of_the_rewrite_builds_at_every_verified_shape(cuda, name):
    task, sources = _graph(cuda, name)
    (_, graph, _), = rewrites(sources["graph"])
    funcs = cuda.lower(task, {**sources, "graph": graph}, task.nominal_shape).funcs
    for v in schedule_variants(funcs, sources["schedule"], gpu=True, target="cuda")[:2]:
        for shape in [*task.small_shapes, *task.sweep_shapes]:
            assert "__global__" in _cuda_code(cuda, task, {**sources, "graph": graph, "schedule": v.text}, shape)


def test_graph_level_offers_the_rewrite_first_on_a_gpu_last_on_a_cpu(cuda, llvm):
    _, sources = _graph(cuda, "cross_entropy")
    rules = [v.rule for v in graph_variants(sources["graph"], gpu=True)]
    assert rules[:2] == ["log_softmax_gather_online", "log_softmax_gather"] and "fusion" in rules[2:]
    _, sources = _graph(llvm, "rmsnorm")
    rules = [v.rule for v in graph_variants(sources["graph"])]
    assert rules[0] == "fusion" and rules[-1] == "square"  # rows first on a CPU (test_tvm_cpu_rows)


def test_schedule_expansion_offers_the_rewrite_with_its_schedules_first(cuda, monkeypatch):
    from kstrata.backends.tvm import isolated

    seen = []

    def fake_expansion(task, sources, backend, *, gpu=False, tune=None, **kw):
        seen.append(sources["graph"])
        tag = "new" if "log_softmax_gather" in sources["graph"] else "old"
        return [{"text": f"# {tag} {i}\n", "rule": "gpu_rows", "func": "f", "description": str(i)}
                for i in range(6)], None

    monkeypatch.setattr(isolated, "schedule_expansion", fake_expansion)
    task, sources = _graph(cuda, "cross_entropy")
    root = SimpleNamespace(sources=sources, hash="root")
    ctx = ProposeContext(backend=cuda.name, levels=cuda.levels, seed=0, step=0, tree=[root])
    props = TVMRulesProposer(cuda, tune_trials=0).propose(task, root, None, "schedule", context=ctx).proposals
    # the one-pass form first (the row read once), then the two-pass one, two schedules each
    assert [p.level for p in props[:4]] == ["graph"] * 4
    assert [p.sources["schedule"] for p in props[:4]] == ["# new 0\n", "# new 1\n"] * 2
    assert all("R.nn.log_softmax" not in p.sources["graph"] for p in props[:4])
    assert [p.metadata["rule"] for p in props[:4:2]] == ["log_softmax_gather_online+gpu_rows",
                                                          "log_softmax_gather+gpu_rows"]
    assert [p.sources["schedule"] for p in props[4:]] == [f"# old {i}\n" for i in range(4)]
    assert all(p.sources["graph"] == sources["graph"] for p in props[4:])
    # on a CPU target the schedule expansion keeps to schedules
    llvm = get_backend("tvm-llvm")
    seen.clear()
    root = SimpleNamespace(sources=llvm.initial_sources(task), hash="root")
    props = TVMRulesProposer(llvm, tune_trials=0).propose(task, root, None, "schedule", context=ctx).proposals
    assert {p.level for p in props} == {"schedule"} and len(seen) == 1
