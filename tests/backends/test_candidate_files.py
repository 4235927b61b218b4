"""No candidate's source stays on disk (case 21): ``load_model_new`` deletes its
file right after import (the text stays in linecache for inspect and
tracebacks), and a worker pool's directory, the workers' TMPDIR, goes with
``close()`` or, after its process was killed, with the next pool. ``kstrata
eval`` end to end leaving nothing in its TMPDIR is
tests/sandbox/test_cases_sandbox.py's case 21."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
import torch

from kstrata.backends.base import CandidateLoadError
from kstrata.backends.pytorch import load_model_new
from kstrata.execute import WorkerPool
from kstrata.execute.pool import _sweep_stale_dirs

MARKER = "# marker-candidate-7c1f0e"
CANDIDATE = f"""{MARKER}
import torch

def scale(x):
    return x * 2

class ModelNew(torch.nn.Module):
    def forward(self, x):
        if x.numel() == 7:
            raise RuntimeError("seven")
        return scale(torch.relu(x)) / 2
"""


def test_load_model_new_leaves_no_file_but_source_stays_readable():
    model = load_model_new(CANDIDATE, [])
    path = Path(inspect.getmodule(type(model)).__file__)
    assert not path.exists() and path.parent.stat().st_mode & 0o777 == 0o700
    x = torch.randn(5)
    assert torch.equal(model(x), torch.relu(x))
    # what Triton's JIT and interpreter do with a kernel: read its source through inspect
    module = inspect.getmodule(type(model))
    assert inspect.getsource(module.scale).startswith("def scale(x):")
    assert inspect.getsourcelines(type(model).forward)[1] == 8
    try:
        model(torch.randn(7))
    except RuntimeError:
        assert 'raise RuntimeError("seven")' in traceback.format_exc()
    with pytest.raises(CandidateLoadError, match="<candidate>.*syntax|SyntaxError"):
        load_model_new("def (:\n", [])
    assert list(path.parent.iterdir()) == []


def test_pool_directory_is_the_workers_tmpdir_and_goes_with_close(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    pool = WorkerPool(size=1)
    root = Path(pool.cwd)
    assert root.parent == tmp_path and root.name.startswith(f"kstrata-worker-{os.getpid()}-")
    r = pool.call("tempfile:gettempdir", timeout_s=60)
    assert r.ok and Path(r.value) == root / "tmp"
    r = pool.call("tempfile:mkdtemp", timeout_s=60)
    assert r.ok and Path(r.value).is_dir()
    pool.call("time:sleep", 30, timeout_s=0.5)  # a killed worker leaves its files behind ...
    pool.close()
    assert not root.exists()  # ... but not the pool's directory


def test_directories_of_dead_kstrata_processes_are_swept(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = tmp_path / f"kstrata-worker-{dead}-abc"
    live = tmp_path / f"kstrata-worker-{os.getpid()}-def"
    other = tmp_path / "kstrata-worker-old_name"
    for d in (stale, live, other):
        (d / "tmp").mkdir(parents=True)
        (d / "tmp" / "cand.py").write_text(MARKER)
    _sweep_stale_dirs()
    assert not stale.exists() and live.exists() and other.exists()
