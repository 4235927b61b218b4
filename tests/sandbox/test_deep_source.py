"""Legal text nested as deep as Python's parser takes is judged, never a
traceback (case ``deep_source``; red-team round of 2026-12-04)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.sandbox import status
from kstrata.verify.integrity.static import static_findings

REPO = Path(__file__).resolve().parents[2]
CASE = Path(__file__).resolve().parent / "cases" / "deep_source"
KSTRATA = str(Path(sys.executable).with_name("kstrata"))


def test_the_static_checks_walk_the_deepest_tree_the_parser_takes():
    base = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
    limit = sys.getrecursionlimit()
    assert static_findings(base + "y = " + " + ".join(["x"] * 1500) + "\n", dsl=False) == []
    assert static_findings(base + "y = " + "-" * 1500 + "x\n", dsl=False) == []
    assert sys.getrecursionlimit() == limit


@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
def test_a_long_sum_is_judged_not_a_traceback():
    p = subprocess.run([KSTRATA, "eval", "relu", str(CASE / "candidate.py"), "--backend", "pytorch", "--json",
                        "--no-time", "--scope", "small"], capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    d = json.loads(p.stdout[p.stdout.index("{"):])
    assert d["verdict"] == "correct", d["evidence"]
