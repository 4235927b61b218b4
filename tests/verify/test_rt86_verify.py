"""Red-team round rt86 (2026-12-06): faults modelled on public bug reports of other kernel evaluators.

Case folders ``cases/rt86_*``; every attempt is in ``benchmarks/results/redteam_rt86_verify.txt``.

* A Triton row sum that loaded its last partial block without ``other`` and added every lane read correct
  on ``triton-interp``: the interpreter fills masked-out lanes with zeros, while on a GPU they are undefined
  (Triton's ``tl.load`` documentation; flagos-ai/FlagGems#3716). Under the judge's poison patterns they now
  hold the pattern (:mod:`kstrata.backends.triton.masked_other`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASES = Path(__file__).resolve().parent / "cases"
MASKED = CASES / "rt86_masked_load_no_other"

# each candidate's row sums of a 3 x 1029 input (one full 1024 block and a partial one) under poison 0, 1, 2,
# in a fresh interpreter process (TRITON_INTERPRET is read when triton.jit decorates)
_RUN = r"""
import importlib.util, json, sys
import torch
from kstrata.backends.registry import get_backend
backend = get_backend("triton-interp")
backend._prepare()  # what loading a candidate does first (the fidelity patches)
out = {}
x = torch.randn(3, 1029, generator=torch.Generator().manual_seed(0))
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("cand", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = []
    for pattern in (0, 1, 2):
        backend.set_poison(pattern)
        y = mod.ModelNew()(x).reshape(-1)
        rows.append([float(v) for v in (y - x.double().sum(1).float()).abs()])
    out[path.rsplit("/", 1)[-1]] = rows
print(json.dumps(out))
"""


def test_masked_out_lanes_of_a_load_without_other_hold_the_poison():
    """The fault's sums follow the pattern (NaN, then ~1e30 per lane) and are right with poison off; a load
    without ``other`` whose lanes are dropped by ``tl.where`` stays right under every pattern."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", _RUN, str(MASKED / "sum_no_other.py"),
                           str(MASKED / "sum_where_no_other.py")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    off, nan, big = got["sum_no_other.py"]
    assert max(off) < 1e-3
    assert all(v != v for v in nan), nan
    assert min(big) > 1e29, big
    for errs in got["sum_where_no_other.py"]:
        assert max(errs) < 1e-3, got


@pytest.mark.slow
@needs_sandbox
def test_a_row_sum_over_undefined_masked_lanes_is_incorrect_end_to_end(kstrata_eval):
    """sum_dim at the small scope read correct before (66 public and 174 hidden tests, secret rt86s1); now the
    first public test is incorrect and its unwritten_memory item names the load without ``other``."""
    d = kstrata_eval("sum_dim", "rt86_masked_load_no_other/sum_no_other.py", "--no-time", "--scope", "small",
                     backend="triton-interp")
    assert d["verdict"] == "incorrect", str(d.get("evidence"))[:600]
    texts = {i["kind"]: i["text"] for i in d["feedback"]}
    assert "tl.load without other=" in texts.get("unwritten_memory", ""), texts
