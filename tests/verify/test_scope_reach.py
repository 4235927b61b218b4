"""A pass at scope small says which sizes its tests did not reach (queue round
rt56: a cross-entropy whose branch for C > 4096 dropped the online rescale
read correct on 66 public and 170 hidden tests at scope small, where no test
had C above ~1k, while the prompt said the hidden shapes cover C up to ~50k)."""

from __future__ import annotations

import re
import textwrap

import pytest

from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task
from kstrata.verify import runner

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")

#: right up to C = 4096, wrong beyond (a branch only long rows take)
WRONG_FOR_LONG_ROWS = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class ModelNew(nn.Module):
        def forward(self, logits, labels):
            loss = F.cross_entropy(logits, labels, reduction="none")
            return loss * 2.0 if logits.shape[1] > 4096 else loss
''')


def test_a_small_scope_pass_says_no_test_reached_the_long_rows():
    ev = runner.run_protocol(resolve_task("cross_entropy"), "pytorch", {"source": WRONG_FOR_LONG_ROWS},
                             "reach" * 6, scope="small")
    assert ev["verdict"] == "correct", ev  # the branch is wrong, and nothing at this scope runs it
    scope = ev["evidence"]["scope"]
    m = re.search(r"no test at this scope had .*?\bC above (\d+)", scope)
    assert m and int(m.group(1)) <= 4096, scope
    assert "B=17, C=50257" in scope and "code path" in scope, scope


@pytest.mark.parametrize("scope", ["full", "small"])
def test_a_pass_states_the_largest_sizes_its_tests_reached(scope):
    """newcomer nc23: a kernel correct only up to D=4096 (the task's largest declared size) read plain
    'correct' at the full scope, with no word of the sizes tested (the small scope's pass said them)."""
    from pathlib import Path

    from kstrata.tasks.loader import load_task

    task = load_task(Path(__file__).parents[1] / "serve" / "tasks" / "tiny_relu.py")
    relu = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
    ev = runner.run_protocol(task, "pytorch", {"source": relu}, "reach" * 6, scope=scope)
    assert ev["verdict"] == "correct", ev
    said = ev["evidence"]["largest_sizes"]
    bounds = {k: int(v) for k, v in re.findall(r"\b([BD]) up to (\d+)", said)}
    assert set(bounds) == {"B", "D"}, said
    assert bounds["D"] >= 256 and bounds["B"] >= 64, said  # the nominal shape is among the tests
    assert all(b & (b - 1) == 0 for b in bounds.values()), said  # bounds, the hidden sizes unnamed
