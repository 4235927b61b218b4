"""``kstrata export`` of a run with no correct candidate (newcomer nc21): a run
stopped during its first verification was told "`kstrata show RUN CAND` says
where one failed (newcomer nc19)" though nothing had failed, with an internal
round tag in the message. It now gives the ``--resume`` command, and no
user-facing string in kstrata carries a reviewer's round tag."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kstrata
from kstrata.cli.main import app
from kstrata.search import Budget, optimize
from kstrata.tasks.loader import resolve_task
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import NoProposals  # noqa: E402

TINY_RELU = Path(__file__).parents[1] / "serve" / "tasks" / "tiny_relu.py"

START = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


class Interrupted:
    """Ctrl-C while the first candidate is being verified."""

    def evaluate(self, task, backend, sources):
        raise KeyboardInterrupt


def test_export_of_a_run_stopped_before_any_verdict_gives_the_resume_command(tmp_path, monkeypatch):
    (tmp_path / "relu_task.py").write_text(TINY_RELU.read_text())
    task = resolve_task(str(tmp_path / "relu_task.py"))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with pytest.raises(KeyboardInterrupt):
        optimize(task, "pytorch", NoProposals(), Interrupted(), "greedy", Budget(evaluations=2), run_dir,
                 initial_sources={"source": START}, extra_config={"cli": {"baselines": ["eager"]}})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    r = CliRunner().invoke(app, ["export", str(run_dir), "--to", str(tmp_path / "pkg")])
    said = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert "has no correct candidate to export" in said
    assert "failed" not in said and "nc19" not in said and "newcomer" not in said
    assert (f"kstrata optimize {tmp_path / 'relu_task.py'} --backend pytorch --resume {run_dir.resolve()}"
            in said)


ROUND_TAG = re.compile(r"\b(newcomer|red[- ]team|nc\d{1,3}|rt\d{1,3})\b", re.I)


def _messages(tree: ast.AST) -> list[ast.Constant]:
    """String constants that are not docstrings (bare string statements)."""
    bare = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return [n for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in bare]


def test_no_user_facing_string_carries_a_review_round_tag():
    root = Path(kstrata.__file__).parent
    found = [f"{path.relative_to(root)}:{node.lineno}: {node.value[:80]!r}"
             for path in sorted(root.rglob("*.py"))
             for node in _messages(ast.parse(path.read_text(encoding="utf-8")))
             if ROUND_TAG.search(node.value)]
    assert not found, "round tags belong in comments and docstrings, not messages:\n" + "\n".join(found)
