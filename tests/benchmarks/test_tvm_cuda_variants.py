"""benchmarks/tvm_cuda_variants.py without a GPU (``--dry-run``: every variant built for
CUDA with code generation only): its table lists the start and the proposer's first
variants in rank order, the shared-memory rows first."""

from __future__ import annotations

import re

import pytest


@pytest.fixture(scope="module")
def tcv(load_benchmark):
    return load_benchmark("tvm_cuda_variants")


def test_dry_run_lists_the_start_and_the_shared_row_variants(tcv, capsys):
    tcv.main(["--tasks", "rmsnorm", "--dry-run", "--max-variants", "4"])
    out = capsys.readouterr().out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("  rmsnorm")]
    assert len(rows) == 5, out  # the start and 4 variants, each built
    assert rows[0][1:4] == ["-", "start", "default"] and rows[0][4] == "built"
    assert all(r[-6] == "built" for r in rows), out
    ranked = {int(r[1]): r for r in rows[1:]}
    assert sorted(ranked) == [1, 2, 3, 4]
    assert ranked[1][2:7] == ["gpu_rows", "t256", "v4", "u0", "shared"]
    assert ranked[2][2:6] == ["gpu_rows", "t512", "v4", "u0"] and "shared" not in ranked[2]
    m = re.search(r"# rmsnorm .*: (\d+) variants", out)
    assert m and f"{int(m[1]) - 4} past --max-variants not built" in out


def test_params_reads_each_recipe_description(tcv):
    assert tcv.params("dlight GeneralReduction schedule, unroll 64") == "GeneralReduction u64"
    assert tcv.params("reduction s: one output per thread (256 per block), serial reduction, unroll 0") == \
        "per_thread t256 u0"
    assert tcv.params("elementwise c: fused, 512 threads per block, 4 elements per access") == "t512 v4"
