"""Red-team round rt61 (2026-12-05): candidates the verifier passed, as regression tests.

Case folder ``cases_rt61``; every attempt of the round and its verdict is in
``benchmarks/results/redteam_rt61_verify.txt``.

* Host copies doing a DSL candidate's work: for a task whose reference only moves data (``transpose``), the
  allowed layout operators (``copy_``, ``contiguous``) do the whole task. A Triton kernel that wrote row 0
  while ``out[1:].copy_(x.t()[1:])`` wrote the rest (so the no-op probe saw a wrong output) read correct on
  249 tests; so would a TileLang kernel that only copies ``x.t().contiguous()``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kstrata.sandbox import status
from kstrata.verify.integrity.ops import Recorders, moved_the_data

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASE = Path(__file__).resolve().parent / "cases_rt61"


def _said(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def test_host_copies_of_the_inputs_are_counted():
    x = torch.randn(6, 5)
    with Recorders([x]) as rec:
        out = torch.empty(5, 6)
        out[1:].copy_(x.t()[1:])  # 4 x 6 elements from the input
        x.contiguous()  # already contiguous: no copy
    assert rec.dispatch.moved == 24
    assert moved_the_data(rec.dispatch.moved, out.numel())


def test_copies_of_copies_count_and_other_data_does_not():
    x, w = torch.randn(6, 5), torch.randn(6, 5)
    with Recorders([x]) as rec:
        xt = x.t().contiguous()  # 30 from the input
        torch.cat([xt, w.t()])  # 30 more (from the copy), none from w, which is not an input
        w.clone()
        buf = torch.empty(30)
        buf.copy_(buf)  # a storage written onto itself (Triton's interpreter after a launch)
    assert rec.dispatch.moved == 60
    assert not moved_the_data(0, 30) and not moved_the_data(14, 30) and moved_the_data(15, 30)


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("name,backend,verdict", [
    ("transpose_host_rows_triton", "triton-interp", "rejected"),
    ("transpose_honest_triton", "triton-interp", "correct"),
    ("transpose_host_then_copy_tilelang", "tilelang-c", "rejected"),
    ("transpose_honest_tilelang", "tilelang-c", "correct"),
])
def test_rt61_host_copies_do_not_pass_for_a_transpose_kernel(kstrata_eval, name, backend, verdict):
    d = kstrata_eval("transpose", str(CASE / f"{name}.py"), "--scope", "small", "--no-time", backend=backend)
    assert d["verdict"] == verdict, _said(d)
    if verdict == "rejected":
        assert d["check"] == "no_torch_compute" and "only moves data" in _said(d), _said(d)

