"""An exported ``tilelang-c`` kernel runs as the printed recipe says (newcomer
nc15: the recipe was the other backends' ``python SCRIPT.py``; kstrata's venv has
no tilelang, and TileLang's own environment found no target on a CPU machine:
``No registered target detector found an available target``)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

import kstrata
from kstrata.backends import envs
from kstrata.backends.registry import get_backend
from kstrata.cli.main import app
from kstrata.search import Budget, optimize


# stand-ins for the verifier and the proposer: the test is about what export writes and prints
JUDGE = SimpleNamespace(evaluate=lambda task, backend, sources: (
    {"verdict": "correct", "feedback": []},
    {"median_ms": 1.0, "speedups": {"eager": {"value": 1.5, "ci": [1.4, 1.6]}}}))
NO_PROPOSALS = SimpleNamespace(name="none", propose=lambda *a, **k: [])


SCRIPT = """
import torch
from {name} import KernelModule, task_module
task = task_module()
torch.manual_seed(0); layer = KernelModule(*task.get_init_inputs())
torch.manual_seed(0); ref = task.Model(*task.get_init_inputs())
x = task.get_inputs()[0]
print("close", bool(torch.allclose(layer(x), ref(x), atol=1e-4)), tuple(layer(x).shape))
"""


def test_the_printed_recipe_of_a_tilelang_c_export_runs(tmp_path):
    ok, why = envs.env_ready("tilelang")
    if not ok:
        pytest.skip(f"TileLang environment not set up: {why}")
    backend = get_backend("tilelang-c")
    task = kstrata.load_task("rmsnorm")
    res = optimize(task, backend, NO_PROPOSALS, JUDGE, "greedy", Budget(evaluations=1),
                   tmp_path / "run", initial_sources=backend.initial_sources(task))
    out = tmp_path / "work"
    out.mkdir()
    r = CliRunner().invoke(app, ["export", str(res.run_dir), "--to", str(out / "rms_tl"), "--shape", "B=8,D=512"],
                           env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    # the recipe's command line: PYTHONPATH=PARENT PYTHON SCRIPT.py, PYTHON the TileLang environment's
    m = re.search(r"PYTHONPATH=(\S+) (\S+) SCRIPT\.py", r.output)
    assert m, r.output
    python = shlex.split(m.group(2))[0]
    assert python == str(envs.env_python("tilelang")), r.output
    assert "TILELANG_DEFAULT_TARGET=c" in r.output
    (out / "use.py").write_text(SCRIPT.format(name="rms_tl"))
    env = {k: v for k, v in os.environ.items() if k not in ("TILELANG_DEFAULT_TARGET", "PYTHONPATH")}
    env["PYTHONPATH"] = shlex.split(m.group(1))[0]
    run = subprocess.run([python, str(out / "use.py")], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "close True (8, 512)" in run.stdout


def test_kstrata_s_own_python_is_told_which_python_runs_a_tilelang_export(tmp_path):
    """Loaded where tilelang is missing, the export names the interpreter to use
    instead of ``No module named 'tilelang'`` from the candidate's first line."""
    import json
    import sys

    from kstrata.cli.export import _FILE

    if __import__("importlib").util.find_spec("tilelang") is not None:
        pytest.skip("tilelang is importable in this interpreter")
    pkg = tmp_path / "kexp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(_FILE.format(title="t", run="r", hash="h", runs_at="a"))
    (pkg / "export.json").write_text(json.dumps({"backend": "tilelang-c", "shape": {}, "target": "c",
                                                 "python": "/envs/tilelang/bin/python"}))
    (pkg / "candidate.py").write_text("import tilelang\n")
    r = subprocess.run([sys.executable, "-c", "import kexp; kexp.candidate_module()"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "run it with the TileLang environment's python (/envs/tilelang/bin/python" in r.stderr, r.stderr
