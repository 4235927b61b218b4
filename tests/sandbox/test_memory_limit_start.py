"""``KSTRATA_CANDIDATE_MEMORY_MB`` counts from what the candidate's process
maps when it starts (red-team round 3): forked from a zygote that imported
torch, it maps about 1 GB before the candidate allocates anything, so a
1500 MiB address-space limit counted from zero left an honest relu at
4096 x 4096 out of memory in the harness's own checks, and a small limit
made the forked child fail its start and fall back into the zygote's loop,
hanging the verification until its time limit."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

RELU = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def _verify(monkeypatch, mb: int) -> dict:
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import run_protocol

    monkeypatch.setenv("KSTRATA_CANDIDATE_MEMORY_MB", str(mb))
    return run_protocol(resolve_task("relu"), "pytorch", {"source": RELU}, "5eed" * 4, preset="warn",
                        scope="small", timeout_s=150)


def test_an_honest_relu_at_its_nominal_shape_fits_1500_mib(monkeypatch):
    ev = _verify(monkeypatch, 1500)
    assert ev["verdict"] == "correct", ev["evidence"]


def test_a_limit_too_small_ends_the_candidate_instead_of_hanging(monkeypatch):
    ev = _verify(monkeypatch, 64)
    assert ev["verdict"] not in ("correct", "timeout"), ev
