"""Identical integrity findings are reported once (newcomer nc15: two ``.half()``
calls on one line, ``(x.half() * x.half())``, gave two identical-looking
no_precision_downgrade findings)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import kstrata
from kstrata.backends.registry import get_backend
from kstrata.verify.runner import Stop, _static_stage

CANDIDATE = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x):
        ss = (x.half() * x.half()).mean(-1, keepdim=True).float()
        return x * torch.rsqrt(ss + 1e-6) * self.weight
'''


def test_two_identical_findings_on_one_line_are_one():
    ctx = SimpleNamespace(task=kstrata.load_task("rmsnorm"), sources={"source": CANDIDATE},
                          backend=get_backend("pytorch"), backend_name="pytorch", actions={}, warnings=[])
    with pytest.raises(Stop) as e:
        _static_stage(ctx)
    findings = e.value.evidence["findings"]
    assert [f["check"] for f in findings] == ["no_precision_downgrade"], findings
    assert "line 11" in findings[0]["message"]
