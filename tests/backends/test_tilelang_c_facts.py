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


MAX_PROBE = textwrap.dedent('''
    import json, sys
    import tilelang, tilelang.language as T, torch

    def make(loop):
        @tilelang.jit(out_idx=[-1], target="c", compile_flags=["-O3"])
        def k(rows, d):
            @T.prim_func
            def main(X: T.Tensor((rows, d), "float32"), Y: T.Tensor((rows,), "float32")):
                with T.Kernel(rows, threads=1) as r:
                    part = T.alloc_local((8,), "float32")
                    top = T.alloc_var("float32")
                    for k in loop(8):
                        part[k] = -T.infinity("float32")
                    for j in T.serial(d // 8):
                        for k in loop(8):
                            part[k] = T.max(part[k], X[r, j * 8 + k])
                    top = -T.infinity("float32")
                    for k in T.serial(8):
                        top = T.max(top, part[k])
                    Y[r] = top
            return main
        return k(4, 64)

    out = {}
    for name, loop in (("vectorized", T.vectorized), ("serial", T.serial)):
        try:
            x = torch.randn(4, 64)
            out[name] = bool(torch.equal(make(loop)(x), x.amax(-1)))
        except Exception as e:
            out[name] = type(e).__name__ + ": " + str(e)[:200]
    json.dump(out, open(sys.argv[1], 'w'))
''')


def test_t_max_in_t_vectorized_does_not_compile_and_the_sheet_says_so(tmp_path):
    """Queue round rt63 (max_dim, tilelang-c): the sheet said `T.max` and
    `T.min` lower inside `T.vectorized`; they become a `?:` on two float4
    structs and g++ rejects it. In a `T.serial` lane loop the same partial
    maxima compile and are exact."""
    from kstrata.agents.prompt import api_sheet

    ok, _ = envs.env_ready("tilelang")
    if not ok:
        pytest.skip("the TileLang environment is not set up (kstrata setup)")
    probe = tmp_path / "probe.py"  # a file: TileLang reads a kernel's source text
    probe.write_text(MAX_PROBE)
    run = subprocess.run([str(envs.python_for("tilelang-c")), str(probe), str(tmp_path / "out.json")],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False,
                         env={**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads((tmp_path / "out.json").read_text())
    assert got["serial"] is True
    assert str(got["vectorized"]).startswith("RuntimeError: Compilation Failed!")
    assert "no match for" in run.stderr and "operator>" in run.stderr and "float4" in run.stderr
    sheet = api_sheet("tilelang-c", "source")
    assert "`T.max` and `T.min` inside `T.vectorized` do not compile on this target" in sheet
    assert "(`+ - * /`, `T.max`, `T.min`) lower" not in sheet
