"""A recurrent model is exported to TVM at its smallest shape (issue #23
item 3): torch.export and the Relax frontend unroll the recurrence over its
sequence and layers, so the export's time grows with the sizes (KernelBench's
35_LSTM at 512 steps x 6 layers ran for 20 minutes); a feed-forward model
keeps the shape with the most distinct sizes (a shape-generic graph).

The task files are small KernelBench-format files written by the test."""

from __future__ import annotations

import pytest

pytest.importorskip("tvm")

from kstrata.backends.tvm import lower  # noqa: E402
from kstrata.tasks.loader import load_task  # noqa: E402

MODEL = '''import torch
import torch.nn as nn

KSTRATA = {{
    "shapes": {{
        "nominal": {{"batch_size": 10, "sequence_length": 512, "input_size": 128}},
        "small": [{{"batch_size": 4, "sequence_length": 9, "input_size": 9}}],
        "sweep": [{{"batch_size": 3, "sequence_length": 7, "input_size": 7}},
                  {{"batch_size": 4, "sequence_length": 12, "input_size": 12}}],
    }},
}}

class Model(nn.Module):
    def __init__(self, input_size):
        super().__init__()
        self.layer = {layer}

    def forward(self, x):
        return self.layer(x){pick}

batch_size = 10
sequence_length = 512
input_size = 128

def get_inputs():
    return [torch.randn(batch_size, sequence_length, input_size)]

def get_init_inputs():
    return [input_size]
'''


def _task(tmp_path, name, layer, pick=""):
    p = tmp_path / f"{name}.py"
    p.write_text(MODEL.format(layer=layer, pick=pick))
    return load_task(p)


def test_a_recurrent_model_is_exported_at_its_smallest_shapes(tmp_path):
    task = _task(tmp_path, "lstm", "nn.LSTM(input_size, 8, 2, batch_first=True)", "[0]")
    assert lower._unrolls(task)
    first = lower._export_shape(task)
    assert (first["sequence_length"], first["input_size"]) == (7, 7)
    probe = lower._probe_shape(task, first)
    assert (probe["sequence_length"], probe["input_size"]) == (9, 9)


def test_a_feed_forward_model_keeps_the_shape_with_the_most_distinct_sizes(tmp_path):
    task = _task(tmp_path, "linear", "nn.Linear(input_size, 8)")
    assert not lower._unrolls(task)
    assert lower._export_shape(task)["sequence_length"] == 512
