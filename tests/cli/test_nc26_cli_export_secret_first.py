"""``kstrata export`` of a run whose ``secret`` file is gone says so before it announces a
verification (newcomer nc26).

A run whose best passed the search's screening only is verified at the full scope by export;
with ``RUN/secret`` deleted (a damaged or half-copied run folder) export printed ``verifying
0bda6bdf612f at the full scope first ...`` and the interpreter's estimate, then ``error:
RUN/secret is missing or empty, ...``: a verification was announced that never started. The
secret is read first now, so the refusal is all it prints."""

from __future__ import annotations

import shutil

from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.search import Budget, optimize
from kstrata.tasks.loader import resolve_task
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import NoProposals, ScreenOnly  # noqa: E402

TASK = '''import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "elementwise", "dtype": "float32",
    "shapes": {"nominal": {"B": 64, "D": 64}, "small": [{"B": 8, "D": 64}, {"B": 5, "D": 77}],
               "sweep": [{"B": 1, "D": 64}, {"B": 33, "D": 101}]},
    "flops": "B*D", "bytes": "4*(2*B*D)",
}
B, D = 64, 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
'''

RELU = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0.0)
'''


def test_export_of_a_run_without_its_secret_refuses_before_announcing_a_verification(tmp_path):
    from kstrata.store.secret import run_secret

    (tmp_path / "relu_t.py").write_text(TASK)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    task = resolve_task(str(tmp_path / "relu_t.py"))
    res = optimize(task, "pytorch", NoProposals(), ScreenOnly(run_secret(run_dir)), "greedy",
                   Budget(evaluations=1), run_dir, initial_sources={"source": RELU},
                   extra_config={"cli": {"baselines": ["eager"]}})
    assert res.best is not None and res.best.reduced_scope  # export would verify it at the full scope
    damaged = tmp_path / "damaged"
    shutil.copytree(run_dir, damaged)
    (damaged / "secret").unlink()
    r = CliRunner().invoke(app, ["export", str(damaged), "--to", str(tmp_path / "pkg"), "--unranked"])
    said = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert "secret is missing or empty" in said
    assert "verifying" not in said and "estimate" not in said, r.output
    assert not (tmp_path / "pkg").exists()
