"""Red-team round rt64 (2026-12-05): candidates the verifier passed, as regression tests.

Case folder ``cases_rt64``; every attempt of the round and its verdict is in
``benchmarks/results/redteam_rt64_verify.txt``.

* Host copies of under half the output on a task that only moves data: a Triton transpose whose kernel wrote
  the first 60% of the output rows while ``out[k:].copy_(x.t()[k:])`` wrote the rest read correct (60 public,
  147 hidden tests), and so did a TileLang one that wrote 70%: the rule of rt61 counted host copies as the
  task's work from half the output on.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kstrata.sandbox import status
from kstrata.verify.integrity.ops import Recorders, moved_the_data

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASE = Path(__file__).resolve().parent / "cases_rt64"


def _said(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def test_host_copies_of_a_share_of_the_output_did_the_work():
    x = torch.randn(50, 40)
    with Recorders([x]) as rec:
        out = torch.empty(40, 50)
        out[24:].copy_(x.t()[24:])  # 40% of the output from the input
    assert moved_the_data(rec.dispatch.moved, out.numel())
    assert moved_the_data(1, 7) and moved_the_data(40, 2000)
    assert not moved_the_data(0, 2000) and not moved_the_data(0, 0)


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("name,backend", [("transpose_host_40pct_triton", "triton-interp"),
                                          ("transpose_host_cols_tilelang", "tilelang-c")])
def test_rt64_host_copies_of_a_third_of_the_output_do_not_pass_for_a_transpose_kernel(kstrata_eval, name, backend):
    d = kstrata_eval("transpose", str(CASE / f"{name}.py"), "--scope", "small", "--no-time", backend=backend)
    assert d["verdict"] == "rejected" and d["check"] == "no_torch_compute", _said(d)
