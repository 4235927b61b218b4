"""Libraries KernelBench's own references import are kstrata's dependencies
(issue #23: L3 48/49_Mamba2 import einops and did not load here: "No module
named 'einops'"), in the main environment and in the isolated ones
``kstrata setup`` makes; a task needing a module this Python lacks names it,
without advising ``pip install NAME`` for a name that may be a local folder
(newcomer nc21: a typosquatting hazard)."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from kstrata.backends import envs
from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import load_task

ROOT = Path(__file__).resolve().parents[2]


def test_einops_is_a_requirement_of_kstrata_and_of_the_isolated_environments(monkeypatch):
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(d.startswith("einops") for d in deps)
    monkeypatch.setattr(metadata, "requires", lambda name: deps)
    assert any(r.startswith("einops") for r in envs.kstrata_requirements())

    def absent(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "requires", absent)  # a source tree pip does not know
    assert any(r.startswith("einops") for r in envs.kstrata_requirements())


def test_a_task_importing_a_missing_module_names_it_without_pip_advice(tmp_path):
    p = tmp_path / "needs_pkg.py"
    p.write_text("import torch\nfrom kstrata_absent_pkg.sub import thing\n"
                 "class Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
                 "def get_inputs():\n    return [torch.randn(4)]\ndef get_init_inputs():\n    return []\n")
    with pytest.raises(TaskError) as e:
        load_task(p)
    assert "No module named 'kstrata_absent_pkg'" in str(e.value)
    assert "pip install" not in str(e.value) and "PYTHONPATH" in str(e.value), e.value
