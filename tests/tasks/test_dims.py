"""Inferred shape variation for tasks with literal shapes (issue #17 item 3)."""

from __future__ import annotations

import torch

from kstrata.tasks.dims import boundary_values, inferred_dims, input_shapes, variation_kind, variation_note
from kstrata.tasks.loader import load_task
from kstrata.verify.runner import run_protocol

LITERAL_TASK = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x, y):
        return torch.relu(x) + y

def get_inputs():
    return [torch.randn(64, 512), torch.randn(64, 512)]

def get_init_inputs():
    return []
'''

# processes the last dim in blocks of 16 and forgets the tail: wrong only when
# it is not a multiple of 16 (the nominal 64 x 512 is)
TAIL_BUG = '''import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.zeros_like(x)
        n = x.shape[-1] // 16 * 16
        out[..., :n] = torch.relu(x[..., :n]) + y[..., :n]
        return out
'''

FIXED_WEIGHT_TASK = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(128, 32)
    def forward(self, x):
        return self.fc(x)

def get_inputs():
    return [torch.rand(16, 128)]

def get_init_inputs():
    return []
'''


def test_literal_task_gets_tied_dims_and_real_variation(tmp_path):
    (tmp_path / "lit.py").write_text(LITERAL_TASK)
    task = load_task(tmp_path / "lit.py")
    assert inferred_dims(task) == {"@64": 64, "@512": 512}
    nominal = input_shapes(task, None)
    assert nominal == [(64, 512), (64, 512)]
    sweep = [input_shapes(task, s) for s in task.sweep_shapes]
    small = [input_shapes(task, s) for s in task.small_shapes]
    assert all(a == b for a, b in sweep + small)  # tied: both inputs resized alike
    assert any(s != nominal for s in small) and sum(s != nominal for s in sweep) >= 3
    assert any(s[0][1] % 16 for s in sweep)  # a last dim that is not a multiple of 16
    assert variation_note(task) is None
    # resized inputs keep the draw's kind and follow the seed
    a = task.instantiate(task.sweep_shapes[0], 3)[1]
    b = task.instantiate(task.sweep_shapes[0], 3)[1]
    assert torch.equal(a[0], b[0]) and a[0].min() < 0 and abs(float(a[0].std()) - 1) < 0.2


def test_tail_mask_bug_exposed_by_the_inferred_sweep(tmp_path):
    (tmp_path / "lit.py").write_text(LITERAL_TASK)
    task = load_task(tmp_path / "lit.py")
    ev = run_protocol(task, "pytorch", {"source": TAIL_BUG}, "secret", scope="full")
    assert ev["verdict"] == "incorrect", ev["evidence"]
    # at the nominal shape alone the bug is invisible
    model, inputs, _, _ = task.instantiate(None, 0)
    ns: dict = {}
    exec(TAIL_BUG, ns)  # noqa: S102 - the test's own candidate text
    assert torch.allclose(ns["ModelNew"]()(*inputs), model(*inputs))


def test_shapes_the_reference_rejects_are_dropped(tmp_path):
    (tmp_path / "fw.py").write_text(FIXED_WEIGHT_TASK)
    task = load_task(tmp_path / "fw.py")
    assert inferred_dims(task) == {"@16": 16, "@128": 128}
    for s in task.small_shapes + task.sweep_shapes:
        assert s["@128"] == 128  # the literal Linear(128, ...) only runs at 128
    assert any(s["@16"] != 16 for s in task.sweep_shapes)
    x = task.instantiate(task.small_shapes[0], 0)[1][0]
    assert 0 <= float(x.min()) and float(x.max()) < 1  # rand-like draw stays rand-like


def test_boundary_values_and_tasks_without_variation(tmp_path):
    assert boundary_values(512) == {"one": 1, "prime": 509, "pow2m1": 255, "pow2p1": 257, "small": 33}
    assert boundary_values(16)["prime"] == 13 and "small" in boundary_values(16)
    fixed = tmp_path / "globals.py"
    fixed.write_text(LITERAL_TASK.replace("torch.randn(64, 512), torch.randn(64, 512)",
                                          "torch.randn(N, 512), torch.randn(N, 512)").replace(
        "class Model", "N = 64\n\nclass Model"))
    task = load_task(fixed)
    assert inferred_dims(task) == {}  # size variables: left to the task's own metadata
    # its nominal shape fits this CPU: its public test is the v + 1 variant, the sweep adds a prime
    # (newcomer nc17: public tests ran N = 64 only, and a smaller task got weaker public tests)
    assert task.small_shapes == [{"N": 65}] and {"N": 31} in task.sweep_shapes
    assert variation_kind(task) == "ok" and variation_note(task) is None
    # a size below MIN_SCALED is left alone: its public tests run N = 12 only, but the hidden ones move N
    # (newcomer nc14 read "NONE" for such a task whose hidden tests caught a tail bug)
    twelve = tmp_path / "twelve.py"
    twelve.write_text(fixed.read_text().replace("N = 64", "N = 12"))
    task = load_task(twelve)
    assert variation_kind(task) == "hidden only" and "hidden tests move N" in variation_note(task)
    literal = tmp_path / "literal.py"
    literal.write_text(LITERAL_TASK.replace("torch.randn(64, 512), torch.randn(64, 512)",
                                            "torch.randn(4, 8), torch.randn(4, 8)"))
    small = load_task(literal)
    assert variation_kind(small) in ("none", "ok")
