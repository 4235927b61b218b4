"""A task whose reference draws random numbers in ``forward`` (or keeps state
between calls) is refused with what to do: such a reference cannot judge any
candidate. Before, ``kstrata eval`` ran the verification, excluded most
elements as "where the task's own reference is wrong too" and blamed the
candidate's heavy-tailed draws (lead's bad-input battery, 2026-12-06). A
reference that is a function of its inputs stays accepted: ``nn.Dropout``
(tasks are run in eval mode) and a ``forward`` that seeds its own generator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import check_reference, load_task

KSTRATA = str(Path(sys.executable).with_name("kstrata"))
HEAD = ('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nB, D = 16, 32\n'
        'KSTRATA = {"shapes": {"nominal": {"B": 16, "D": 32}, "small": [{"B": 4, "D": 8}]}}\n')
TAIL = "def get_inputs():\n    return [torch.randn(B, D)]\n\n\ndef get_init_inputs():\n    return []\n"


def model(init: str, body: str) -> str:
    return HEAD + f"class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n{init}" \
                  f"    def forward(self, x):\n{body}\n\n" + TAIL


RANDOM = {
    "rand_like": model("", "        return x + torch.rand_like(x)"),
    "functional_dropout": model("", "        return F.dropout(x, 0.5, training=True)"),
    "randint_output": model("", "        return torch.randint(0, 10, x.shape)"),
    "counter_state": model("        self.calls = 0\n", "        self.calls += 1\n        return x * self.calls"),
    "shape_varies": model("        self.calls = 0\n",
                          "        self.calls += 1\n        return x[: x.shape[0] - self.calls % 2]"),
}
FUNCTIONS = {
    "dropout_module": model("        self.drop = nn.Dropout(0.5)\n", "        return self.drop(x) * 2"),
    "seeded_in_forward": model("", "        g = torch.Generator().manual_seed(0)\n"
                                   "        return x + torch.rand(x.shape, generator=g)"),
    "nan_alike": model("", "        return x / 0 * 0"),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_a_reference_that_differs_on_the_same_inputs_is_refused(tmp_path, name):
    path = tmp_path / f"task_{name}.py"
    path.write_text(RANDOM[name])
    with pytest.raises(TaskError, match="different outputs for the same inputs.*get_inputs"):
        check_reference(load_task(path))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_a_reference_that_is_a_function_of_its_inputs_is_accepted(tmp_path, name):
    path = tmp_path / f"task_{name}.py"
    path.write_text(FUNCTIONS[name])
    check_reference(load_task(path))


def test_eval_of_a_random_reference_says_so_in_one_line(tmp_path):
    task, cand = tmp_path / "task_noise.py", tmp_path / "cand.py"
    task.write_text(RANDOM["rand_like"])
    cand.write_text("import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return x + torch.rand_like(x)\n")
    p = subprocess.run([KSTRATA, "eval", str(task), str(cand), "--backend", "pytorch", "--no-time"],
                       capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode == 2 and "Traceback" not in out and "different outputs" in out and str(task) in out, out
