"""A failure on the all-negative (``shifted``) draw alone gets a hint that fits
the op: padding leaking into a max/exp/sum for a row reduction, what goes wrong
with negative values for an elementwise op (newcomer nc20: a GELU
approximation's error was told about padding in a max/exp/sum)."""

from __future__ import annotations

import pytest

from kstrata.execute import WorkerPool
from kstrata.tasks.loader import load_task
from kstrata.verify import verify_candidate

TASK = ('import torch\nB, D = 16, 64\n'
        'KSTRATA = {"shapes": {"nominal": {"B": 16, "D": 64}, "small": [{"B": 4, "D": 16}]}}\n'
        "class Model(torch.nn.Module):\n    def forward(self, x):\n        return {op}\n"
        "def get_inputs():\n    return [torch.randn(B, D)]\ndef get_init_inputs():\n    return []\n")
#: right unless every input is negative (only the shifted draw is)
CANDIDATE = ("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        y = {op}\n"
             "        return y * 1.01 if bool((x < 0).all()) and float(x.abs().max()) < 100 else y\n")


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(size=1) as p:
        yield p


@pytest.mark.parametrize("op, says, not_says", [
    ("torch.sigmoid(x) * x", "approximation that loses accuracy for negative values", "padding value"),
    ("x.amax(dim=1)", "padding value such as other=0.0", "sign-dependent"),
], ids=["elementwise", "row_reduction"])
def test_the_shifted_hint_fits_the_op(tmp_path, pool, op, says, not_says):
    path = tmp_path / "task_shift.py"
    path.write_text(TASK.replace("{op}", op))
    ev = verify_candidate(load_task(path), "pytorch", {"source": CANDIDATE.replace("{op}", op)}, secret="s",
                          pool=pool, scope="small", timeout_s=300)
    assert ev.verdict.value == "incorrect", (ev.verdict, ev.evidence)
    dist = [f["text"] if isinstance(f, dict) else str(f) for f in ev.feedback
            if (f.get("kind") if isinstance(f, dict) else getattr(f, "kind", "")) == "distributions"]
    assert dist and "shifted" in dist[0] and says in dist[0] and not_says not in dist[0], ev.feedback
