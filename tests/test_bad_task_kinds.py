"""Malformed task files of kinds case 16 (sandbox/16_bad_task_files_traceback)
did not list are one ``error:`` line with rc 2 that says what to change, not a
traceback, a silent exit or a misleading message (found 2026-12-05):
``get_inputs()`` returning a bare tensor (read as 64 arguments), inputs on the
meta device (a NotImplementedError traceback deep in the verifier),
``sys.exit(3)`` inside ``get_inputs()`` (kstrata ended with rc 3 and no
word), ``Model = 3`` (reported as a shape variable). The advice "e.g. [x]"
also lost its brackets to rich markup."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app

HEAD = """import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""
TAIL = """def get_init_inputs():
    return []
"""
CASES = {
    "bare_tensor": (HEAD + "def get_inputs():\n    return torch.randn(64)\n" + TAIL,
                    ["get_inputs() returned a Tensor of shape (64,), not a list", "e.g. [x] for one tensor"]),
    "meta_device": (HEAD + "def get_inputs():\n    return [torch.empty(64, device='meta')]\n" + TAIL,
                    ["get_inputs() item 0 is a tensor on the meta device"]),
    "sys_exit": (HEAD + "import sys\ndef get_inputs():\n    sys.exit(3)\n" + TAIL, ["SystemExit: 3"]),
    "model_not_a_class": ("import torch\nModel = 3\ndef get_inputs():\n    return [torch.randn(64)]\n" + TAIL,
                          ["Model is int, not a class"]),
}
CANDIDATE = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_malformed_task_is_one_error(tmp_path: Path, kind: str):
    text, said = CASES[kind]
    task, cand = tmp_path / f"task_{kind}.py", tmp_path / "cand.py"
    task.write_text(text)
    cand.write_text(CANDIDATE)
    r = CliRunner().invoke(app, ["eval", str(task), str(cand), "--backend", "pytorch", "--no-time"],
                           env={"COLUMNS": "400"})
    out = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert "error:" in out and "Traceback" not in out, r.output
    for s in said:
        assert s in out, r.output
