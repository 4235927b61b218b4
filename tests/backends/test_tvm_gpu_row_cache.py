"""``gpu_rows`` with ``cache="shared"`` (issue 18): a row-wise PrimFunc's row
staged once in shared memory, read from global memory once, checked in TVM's
CUDA C (no GPU needed) and run through ``tvm-opencl`` on PoCL (the same
schedule, OpenCL ``__local`` memory) against the task's PyTorch reference at
odd shapes."""

from __future__ import annotations

import re

import pytest

from kstrata.backends.registry import get_backend
from kstrata.backends.tvm import build as tb
from kstrata.backends.tvm.coverage import run_once
from kstrata.backends.tvm.gpu_rules import LEADS, SHARED_ROW_BYTES, gpu_variants
from kstrata.tasks.loader import resolve_task

ROW_TASKS = ["rmsnorm", "softmax", "layernorm"]
#: B=7 rows; 1000 columns (float4 lanes divide it, 256 threads x 4 do not), 1001 (nothing divides it)
ODD = [{"B": 7, "D": 1000}, {"B": 7, "D": 1001}]


@pytest.fixture(scope="module")
def cuda():
    return get_backend("tvm-cuda")


def _rows(backend, name, shape=None):
    """(task, initial sources, gpu_rows variants made at ``shape`` (default nominal) for
    ``backend``'s target: (params-like tuple, Variant))."""
    task = resolve_task(name)
    sources = backend.initial_sources(task)
    funcs = backend.lower(task, sources, shape or task.nominal_shape).funcs
    variants = gpu_variants(funcs, sources["schedule"], backend.target(), rules=["gpu_rows"])
    out = []
    for v in variants:
        m = re.search(r"(\d+) threads.*and stores (\d+) wide, unroll (\d+)", v.description)
        staged = "staged once in shared memory" in v.description
        out.append(((int(m[1]), int(m[2]), int(m[3]), "shared" if staged else "none"), v))
    return task, sources, out


def _pick(variants, threads, vec, unroll, cache):
    return next(v for k, v in variants if k == (threads, vec, unroll, cache))


def _kernel_body(code):
    """The one ``__global__`` kernel's body (after its parameter list)."""
    defs = [m.end() for m in re.finditer(r'__global__ void [^;{]*\{', code)]
    assert len(defs) == 1, code[:2000]
    return code[defs[0]:]


def _cuda_code(cuda, task, sources, v, shape):
    _, funcs, _, failed = cuda.scheduled_funcs(task, {**sources, "schedule": v.text}, shape)
    assert not failed
    return _kernel_body(tb.generated_source(tb.build_module(funcs, cuda.target()), "cuda"))


@pytest.mark.parametrize("name", ROW_TASKS)
def test_the_shared_variant_reads_the_row_from_global_memory_once(cuda, name):
    task, sources, rows = _rows(cuda, name)
    shared, plain = _pick(rows, 256, 4, 0, "shared"), _pick(rows, 256, 4, 0, "none")
    d = task.nominal_shape["D"]
    body = _cuda_code(cuda, task, sources, shared, task.nominal_shape)
    assert re.search(rf"__shared__ alignas\(\d+\) float x_shared_ptr\[{d}\];", body), body[:800]
    # one global load site of x, a float4 copy into shared memory covering the row once:
    # ceil(D / (256 threads * 4 lanes)) trips of one float4 per thread
    loads = re.findall(r"x_ptr\s*[+\[]", body)
    assert len(loads) == 1, loads
    copy = re.search(r"for \(int (\w+) = 0; \1 < (\d+); \+\+\1\) \{[^}]*?"
                     r"\*\(float4\*\)\(x_shared_ptr \+[^;]*= \*\(float4\*\)\(x_ptr \+", body)
    assert copy and int(copy[2]) * 256 * 4 == d, body[:1500]
    # the reductions and the output read the staged row
    assert len(re.findall(r"x_shared_ptr\s*[+\[]", body)) >= 1 + (2 if name != "rmsnorm" else 1)
    # the same parameters without the cache read x from global memory once per pass
    assert len(re.findall(r"x_ptr\s*[+\[]", _cuda_code(cuda, task, sources, plain, task.nominal_shape))) >= 2


@pytest.mark.parametrize("shape", ODD)
def test_the_shared_variant_at_an_odd_row_stays_one_read(cuda, shape):
    """Made at the nominal shape, replayed where neither 1024 nor (for 1001) 4 divides the row."""
    task, sources, rows = _rows(cuda, "softmax")
    body = _cuda_code(cuda, task, sources, _pick(rows, 256, 4, 0, "shared"), {**task.nominal_shape, **shape})
    assert f"x_shared_ptr[{shape['D']}]" in body
    assert len(re.findall(r"x_ptr\s*[+\[]", body)) == 1
    assert ("float4" in body) == (shape["D"] % 4 == 0)


def test_no_shared_variant_for_a_row_over_the_limit(cuda):
    """A float32 row of 16384 (64 KiB) exceeds :data:`SHARED_ROW_BYTES`: none is made
    there, and one made at the nominal shape reads global memory when replayed there."""
    big = {"B": 4, "D": 16384}
    assert big["D"] * 4 > SHARED_ROW_BYTES
    task, sources, rows = _rows(cuda, "rmsnorm", big)
    assert rows and all(k[3] == "none" for k, _ in rows)
    _, _, nominal = _rows(cuda, "rmsnorm")
    body = _cuda_code(cuda, task, sources, _pick(nominal, 256, 4, 0, "shared"), big)
    assert "__shared__" in body and "x_shared" not in body  # the statistic only


@pytest.mark.parametrize("name", ROW_TASKS)
def test_the_lead_row_variants_come_first_from_the_start(cuda, name):
    """From dlight's default start the first proposals are :data:`LEADS`."""
    task = resolve_task(name)
    sources = cuda.initial_sources(task)
    funcs = cuda.lower(task, sources, task.nominal_shape).funcs
    variants = gpu_variants(funcs, sources["schedule"], cuda.target())
    _, _, rows = _rows(cuda, name)
    lead_texts = [_pick(rows, p["threads"], p["vec"], p["unroll"], p.get("cache", "none")).text for _, p in LEADS]
    assert [v.text for v in variants[:len(LEADS)]] == lead_texts
    assert {256, 512} == {p["threads"] for _, p in LEADS} and all(p["vec"] == 4 for _, p in LEADS)


@pytest.mark.parametrize("name", ROW_TASKS)
def test_the_shared_variant_computes_the_reference_on_opencl(opencl, name):
    """Run on PoCL (this CPU) at 7 rows of 1000 and of 1001 columns: the staged row
    (``__local`` memory, barriers between the copy and its readers) gives the reference."""
    task, sources, rows = _rows(opencl, name)
    picks = [_pick(rows, 256, 4, 0, "shared"), _pick(rows, 128, 1, 64, "shared")]
    for shape in ODD:
        for v in picks:
            src = {**sources, "schedule": v.text}
            code = opencl.generate_source(task, src, shape)
            assert re.search(rf"__local float x_shared\w*\[{shape['D']}\]", code), code[:1500]
            ok, why = run_once(opencl, task, src, shape)
            assert ok, f"{name} at {shape}, {v.description}: {why}"
