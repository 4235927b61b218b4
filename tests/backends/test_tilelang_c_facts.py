"""The TileLang C-target facts the prompts state (``agents/prompts/api/tilelang.md``,
:data:`kstrata.backends.tilelang.backend.C_TARGET_SCHEDULE_FACT`), checked by
running TileLang with target "c": blocks run in one serial loop, ``threads``
changes nothing in the C code, ``T.vectorized`` and ``T.Parallel`` lower to
4-wide structs, and the C++ compile has no optimization flag unless
``compile_flags=`` adds one."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from kstrata.backends import envs

PROBE = textwrap.dedent('''
    import json, sys
    import tilelang, tilelang.language as T, torch

    def make(kind, threads, flags):
        @tilelang.jit(out_idx=[-1], target="c", compile_flags=flags)
        def k(rows, d):
            @T.prim_func
            def main(X: T.Tensor((rows, d), "float32"), Y: T.Tensor((rows, d), "float32")):
                with T.Kernel(rows, threads=threads) as r:
                    if kind == "vectorized":
                        for jo in T.serial(d // 16):
                            for ji in T.vectorized(16):
                                Y[r, jo * 16 + ji] = X[r, jo * 16 + ji] * 2.0
                    else:
                        for j in T.Parallel(d):
                            Y[r, j] = X[r, j] * 2.0
            return main
        return k(32, 64)

    out = {}
    for kind, threads, flags in (("vectorized", 1, None), ("parallel", 1, None), ("parallel", 4, ["-O3"])):
        k = make(kind, threads, flags)
        x = torch.randn(32, 64)
        out[f"{kind}-{threads}"] = {"ok": bool(torch.allclose(k(x), 2 * x)), "c": k.get_kernel_source()}
    json.dump(out, open(sys.argv[1], 'w'))
''')


def test_the_c_target_facts_hold(tmp_path):
    ok, _ = envs.env_ready("tilelang")
    if not ok:
        pytest.skip("the TileLang environment is not set up (kstrata setup)")
    log = tmp_path / "cxx.log"
    cxx = tmp_path / "cxx.sh"
    cxx.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec ${{REAL_CXX:-c++}} "$@"\n')
    cxx.chmod(0o755)
    env = {**os.environ, "CXX": str(cxx), "TILELANG_CACHE_DIR": str(tmp_path / "cache")}
    probe = tmp_path / "probe.py"  # a file: TileLang reads a kernel's source text
    probe.write_text(PROBE)
    run = subprocess.run([str(envs.python_for("tilelang-c")), str(probe), str(tmp_path / "out.json")], capture_output=True, text=True,
                         env=env, timeout=600, cwd=tmp_path, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads((tmp_path / "out.json").read_text())
    assert all(v["ok"] for v in got.values())
    for v in got.values():  # blocks: one serial loop over the block index, in one thread
        assert "for (int32_t bx = 0; bx < 32; ++bx)" in v["c"] and "omp" not in v["c"]
    assert "float4" in got["vectorized-1"]["c"] and "float4" in got["parallel-1"]["c"]
    assert got["parallel-1"]["c"].split("main_kernel", 1)[1] == got["parallel-4"]["c"].split("main_kernel", 1)[1]
    lines = Path(log).read_text().splitlines()
    assert len(lines) == 3, lines
    assert not any(f in lines[0].split() for f in ("-O1", "-O2", "-O3", "-Os"))  # no optimization by default
    assert "-O3" in lines[2].split()  # compile_flags reach the compile command
