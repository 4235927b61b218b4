"""The triton-interp warnings before a run say what each scope holds, so that a
screening (scope small) that plans more tests than the full-scope confirmation
reads as what it is (newcomer nc15: "screening (scope small) runs 243 tests",
then "full-scope verification ... runs 183 tests": the task's sweep shapes were
smaller than its small shapes, and scope small tests both)."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from kstrata.backends.registry import get_backend
from kstrata.cli import optimize as optimize_cli
from kstrata.tasks.loader import resolve_task
from kstrata.verify import interp_cost

TASK = '''import torch
import torch.nn as nn

KSTRATA = {"shapes": {"nominal": {"B": 64, "D": 512}, "small": [{"B": 8, "D": 256}, {"B": 5, "D": 77}],
                      "sweep": [{"B": 3, "D": 257}, {"B": 1, "D": 1000}]}}

B = 64
D = 512


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x / torch.sqrt((x * x).sum(-1, keepdim=True) + 1e-6) * self.scale


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return [D]
'''


def test_a_screening_larger_than_the_full_scope_says_why(tmp_path, monkeypatch):
    path = tmp_path / "l2norm_small.py"
    path.write_text(TASK)
    task = resolve_task(str(path))
    small, full = interp_cost.plan_bytes(task, "small")[0], interp_cost.plan_bytes(task, "full")[0]
    assert small > full  # the case: the sweep is cheaper than the small shapes
    monkeypatch.setattr(interp_cost, "WARN_S", 0.0)  # warn whatever this machine's speed
    buf = io.StringIO()
    monkeypatch.setattr(optimize_cli, "err_console", Console(file=buf, width=2000))
    optimize_cli._interpreter_notes(task, get_backend("triton-interp"),
                                    SimpleNamespace(scope="small", confirm_scope="full"))
    text = " ".join(buf.getvalue().split())
    assert "screening each candidate (scope small: the task's small shapes, perturbed small shapes and " in text
    assert f"here more tests than the full scope's {full}, since this task's sweep shapes" in text, text
    assert f") runs {small} tests" in text and f"runs {full} tests" in text
    assert "full-scope verification (the sweep's shapes and perturbed sweep shapes) that confirms" in text
