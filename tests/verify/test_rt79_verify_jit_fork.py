"""torch's inter-op thread API in a candidate is no_threads, as Python threads are (red team rt79).

A call that returns after ``torch.jit.fork`` without waiting for the future leaves its work running after
it returned, out of the judge's sight: the harness watches Python threads only, so
benchmarks/results/redteam_rt79_timing/rt79_fork_left_running.py read correct and passed no_threads_left,
and rt79_gelu_tail.py moved a fifth of its rows off the timed calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.verify.integrity.static import static_findings

ROOT = Path(__file__).resolve().parents[2]
HEAD = "import torch\nimport torch.nn as nn\n"
BODY = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return {call}\n"


@pytest.mark.parametrize("text", [
    HEAD + "def _tail(x):\n    return torch.relu(x)\n\n" + BODY.format(call="torch.jit.fork(_tail, x).wait()"),
    HEAD + "from torch.jit import fork\n" + BODY.format(call="fork(torch.relu, x).wait()"),
    HEAD + "from torch import futures\n" + BODY.format(call="torch.relu(x)"),
    HEAD + BODY.format(call="torch._C._jit_fork(torch.relu, x).wait()"),
])
def test_torchs_inter_op_thread_api_is_no_threads(text):
    assert "no_threads" in {f.check for f in static_findings(text, dsl=False)}


def test_getattr_on_torch_jit_is_rejected_as_introspection():
    """By a string the name is not seen; getattr on a torch module is no_introspection already."""
    text = HEAD + BODY.format(call="getattr(torch.jit, 'fork')(torch.relu, x).wait()")
    assert "no_introspection" in {f.check for f in static_findings(text, dsl=False)}


def test_the_round_trips_reproducers_are_caught_and_an_honest_relu_is_not():
    for name in ("rt79_fork_left_running.py", "rt79_gelu_tail.py"):
        text = (ROOT / "benchmarks/results/redteam_rt79_timing" / name).read_text()
        assert "no_threads" in {f.check for f in static_findings(text, dsl=False)}, name
    honest = HEAD + BODY.format(call="torch.relu(x)")
    assert not static_findings(honest, dsl=False)
