"""The pytorch-cuda backend where no CUDA device exists (issue 22): registered,
listed by ``kstrata env``, refused by ``eval`` with its reason, and the device
a command ran on is printed. The GPU path itself is exercised by
``benchmarks/gpu_verify_cases.py`` on a lent GPU."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from kstrata.backends import registry
from kstrata.backends.pytorch_cuda import PyTorchCudaBackend, cuda_availability, device_line
from kstrata.cli.main import app
from kstrata.verify.integrity.registry import applies

ROOT = Path(__file__).resolve().parents[2]
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA path")


def test_registered_and_on_cuda() -> None:
    assert "pytorch-cuda" in registry.names()
    b = registry.get_backend("pytorch-cuda")
    assert isinstance(b, PyTorchCudaBackend)
    assert b.device == "cuda" and b.level_kinds == {"source": "python-torch"}
    from kstrata.tasks.loader import resolve_task

    assert "class ModelNew(Model)" in b.initial_sources(resolve_task("relu"))["source"]


def test_pytorch_candidates_are_not_held_to_dsl_rules() -> None:
    for check in ("no_torch_compute", "kernel_launched"):
        assert not applies(check, "pytorch-cuda")
        assert applies(check, "triton")


@no_cuda
def test_unavailable_without_cuda_says_why() -> None:
    av = cuda_availability()
    assert not av.usable
    assert "CUDA" in av.reason and "pytorch backend" in av.reason
    assert dict(av.versions)["torch"] == torch.__version__
    assert device_line(PyTorchCudaBackend()) == "device: cuda (not available here) (backend pytorch-cuda)"


@no_cuda
def test_env_lists_it_unusable() -> None:
    r = CliRunner().invoke(app, ["env", "--json"])
    assert r.exit_code == 0, r.output
    b = json.loads(r.output)["backends"]["pytorch-cuda"]
    assert b["usable"] is False and "CUDA" in b["reason"]


@no_cuda
def test_eval_refuses_with_the_reason(tmp_path: Path) -> None:
    cand = tmp_path / "c.py"
    cand.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return torch.relu(x)\n")
    r = CliRunner().invoke(app, ["eval", "relu", str(cand), "--backend", "pytorch-cuda"])
    assert r.exit_code == 2
    assert "pytorch-cuda is not usable here" in r.output and "CUDA" in r.output


def test_eval_prints_the_device(tmp_path: Path, monkeypatch) -> None:
    from kstrata.cli import eval as eval_cli

    cand = tmp_path / "c.py"
    cand.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return torch.relu(x)\n")
    runner = CliRunner()
    done = []
    real = eval_cli.evaluate_sources
    monkeypatch.setattr(eval_cli, "evaluate_sources", lambda *a, **k: done.append(real(*a, **k)) or done[-1])
    r = runner.invoke(app, ["eval", "relu", str(cand), "--backend", "pytorch", "--json", "--no-time",
                            "--scope", "small", "--timeout", "300"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output[r.output.index("{"):])
    assert d["verdict"] == "correct"
    assert d["device"].startswith("cpu: ") and d["device"].endswith("(backend pytorch)")
    # the same evaluation printed for a person (not verified a second time)
    monkeypatch.setattr(eval_cli, "evaluate_sources", lambda *a, **k: done[0])
    r = runner.invoke(app, ["eval", "relu", str(cand), "--backend", "pytorch", "--no-time",
                            "--scope", "small", "--timeout", "300"])
    assert r.exit_code == 0 and "device: cpu: " in r.output and "correct" in r.output, r.output


def test_gpu_case_rows_point_at_files() -> None:
    spec = importlib.util.spec_from_file_location("gvc", ROOT / "benchmarks" / "gpu_verify_cases.py")
    mod = importlib.util.module_from_spec(spec)
    import sys

    sys.modules["gvc"] = mod  # dataclasses look their module up there
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop("gvc", None)
    rows = mod.rows()
    assert len({r.id for r in rows}) == len(rows)
    for r in rows:
        assert (r.folder / r.cand).is_file(), r.id
        assert r.backend in mod.CPU_OF
        if r.task.endswith(".py"):
            assert (r.folder / r.task).is_file(), r.id
