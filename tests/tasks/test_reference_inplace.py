"""A task whose reference changes an input in place is refused with what to do
(newcomer nc20: `forward` was `torch.relu_(x)`, and a candidate doing the same
was `rejected inputs_unchanged` with no word that the reference does it too);
an in-place op on an intermediate tensor stays fine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import check_reference, load_task

KSTRATA = str(Path(sys.executable).with_name("kstrata"))
HEAD = ('import torch\nimport torch.nn as nn\nB, D = 16, 32\n'
        'KSTRATA = {"shapes": {"nominal": {"B": 16, "D": 32}, "small": [{"B": 4, "D": 8}]}}\n')
TAIL = "def get_inputs():\n    return [torch.randn(B, D)]\n\n\ndef get_init_inputs():\n    return []\n"
INPLACE_INPUT = HEAD + ("class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu_(x)\n\n\n"
                        + TAIL)
INPLACE_SECOND = HEAD.replace("B, D = 16, 32", "B, D = 16, 32") + (
    "class Model(nn.Module):\n    def forward(self, x, y):\n        y.mul_(2)\n        return x + y\n\n\n"
    "def get_inputs():\n    return [torch.randn(B, D), torch.randn(B, D)]\n\n\ndef get_init_inputs():\n    return []\n")
INPLACE_INTERMEDIATE = HEAD + (
    "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.act = nn.ReLU(inplace=True)\n    def forward(self, x):\n        return self.act(x * 2)\n\n\n" + TAIL)


@pytest.mark.parametrize("text, item", [(INPLACE_INPUT, 0), (INPLACE_SECOND, 1)], ids=["relu_", "second_input"])
def test_a_reference_that_changes_an_input_is_refused(tmp_path, text, item):
    path = tmp_path / "task_inplace.py"
    path.write_text(text)
    with pytest.raises(TaskError, match=f"changes get_inputs\\(\\) item {item} in place.*clone"):
        check_reference(load_task(path))


def test_an_inplace_op_on_an_intermediate_is_fine(tmp_path):
    path = tmp_path / "task_intermediate.py"
    path.write_text(INPLACE_INTERMEDIATE)
    check_reference(load_task(path))


def test_eval_says_so_in_one_line(tmp_path):
    task, cand = tmp_path / "task_inplace.py", tmp_path / "cand.py"
    task.write_text(INPLACE_INPUT)
    cand.write_text("import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return torch.relu_(x)\n")
    p = subprocess.run([KSTRATA, "eval", str(task), str(cand), "--backend", "pytorch", "--no-time"],
                       capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode == 2 and "Traceback" not in out and "in place" in out and str(task) in out, out[-2000:]
