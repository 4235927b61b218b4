"""``kstrata tasks show`` prints only what it knows: no ``floor=None`` in the
tolerance line, and an ``inputs`` column only for a task whose shapes do not
name the input sizes (a KernelBench file with literal sizes), not a column
of ``-`` (the newcomer's report)."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.cli.main import app

KERNELBENCH = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(16, 32)]


def get_init_inputs():
    return []
"""


def _show(name: str) -> str:
    r = CliRunner().invoke(app, ["tasks", "show", name], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    return r.output


def test_a_suite_task_shows_named_shapes_and_no_unset_floor():
    text = _show("rmsnorm")
    header = next(ln for ln in text.splitlines() if "FLOP/B" in ln)
    assert "inputs" not in header and "B=4096, D=4096" in text
    assert "floor=None" not in text and "tolerance: oracle (fp64)" in text


def test_a_file_with_literal_sizes_shows_its_input_sizes(tmp_path):
    path = tmp_path / "relu_literal.py"
    path.write_text(KERNELBENCH)
    text = _show(str(path))
    header = next(ln for ln in text.splitlines() if "FLOP/B" in ln)
    assert "inputs" in header and "16x32" in text


def test_a_task_without_a_flops_formula_says_what_was_counted(tmp_path):
    # newcomer nc11: a KernelBench-style l2norm without metadata showed "0FLOP" and "FLOP/B 0.00", unexplained
    task = tmp_path / "l2norm_rows.py"
    task.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                    "    def forward(self, x):\n        return x / x.norm(dim=-1, keepdim=True)\n\n\n"
                    "def get_inputs():\n    return [torch.randn(64, 128)]\n\n\ndef get_init_inputs():\n    return []\n")
    r = CliRunner().invoke(app, ["tasks", "show", str(task)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "counting matrix products and convolutions only" in " ".join(r.output.split())
