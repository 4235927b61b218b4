"""The error-growth item on an elementwise task does not name accumulation
precision (queue round rt69: 'relative error grows with problem size:
accumulation precision' on relu, which sums nothing, pointed the wrong way)."""

from __future__ import annotations

import textwrap

from kstrata.tasks.loader import resolve_task
from kstrata.verify import verify_candidate

#: relu whose error is proportional to the number of elements (an offset that depends on position)
GROWING = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class ModelNew(nn.Module):
        def forward(self, x):
            return torch.relu(x) * (1 + 1e-4 * x.numel() ** 0.5)
''')


def test_growth_on_an_elementwise_task_names_no_accumulation():
    ev = verify_candidate(resolve_task("relu"), "pytorch", {"source": GROWING}, secret="g")
    d = ev.to_dict()
    assert d["verdict"] == "incorrect", d.get("evidence")
    growth = [i for i in d["feedback"] if i["kind"] == "reduction_growth"]
    assert growth, [i["kind"] for i in d["feedback"]]
    assert "accumulation precision" not in growth[0]["text"] and "sums nothing" in growth[0]["text"], growth
