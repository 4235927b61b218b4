"""What ``optimize --initial`` takes (newcomer nc11: pytorch asked for an
undocumented JSON of levels): a plain ``.py`` ModelNew file on every one-file
backend, refused in one line where it does not parse; a multi-level backend
says what it takes instead; the help says all of it."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.search.budget import Budget
from kstrata.search.candidate import normalize_source
from kstrata.store.run_store import RunStore

BROKEN = '''import torch
import triton
import triton.language as tl


class ModelNew(torch.nn.Module):
    def forward(self, x)
        return x
'''

RELU = '''import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.clamp_min(x, 0.0)
'''


def _root_only(monkeypatch):
    from kstrata.cli import optimize as cli_optimize

    monkeypatch.setattr(cli_optimize, "_budget", lambda option, resume: Budget(evaluations=0))


def test_initial_plain_py_for_pytorch_is_the_root(tmp_path, monkeypatch):
    _root_only(monkeypatch)
    user = tmp_path / "my_relu.py"
    user.write_text(RELU)
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "pytorch", "--initial", str(user),
                                 "--proposer", "llm", "--llm", f"queue:{tmp_path / 'queue'}",
                                 "--budget", "evals=1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    with RunStore.open(out) as store:
        [root] = [c for c in store.candidates(with_sources=True) if c.role == "initial"]
    assert root.sources == {"source": normalize_source(RELU)}


def test_initial_with_a_syntax_error_or_for_a_multi_level_backend_says_what_to_give(tmp_path, monkeypatch):
    _root_only(monkeypatch)
    broken = tmp_path / "broken.py"
    broken.write_text(BROKEN.replace("import triton\nimport triton.language as tl\n", ""))
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "pytorch", "--initial", str(broken),
                                 "--proposer", "llm", "--llm", f"queue:{tmp_path / 'queue'}",
                                 "--budget", "evals=1", "--out", str(tmp_path / "run")])
    assert r.exit_code == 2 and "broken.py, line 5" in r.output and "syntax error" in r.output, r.output
    assert not (tmp_path / "run" / "run.db").exists()
    user = tmp_path / "my_relu.py"
    user.write_text(RELU)
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--initial", str(user),
                                 "--budget", "evals=1", "--out", str(tmp_path / "run2")])
    assert r.exit_code == 2 and "best/" in r.output and "JSON" in r.output, r.output


def test_optimize_help_says_what_initial_takes():
    r = CliRunner().invoke(app, ["optimize", "--help"], terminal_width=200)
    assert r.exit_code == 0
    text = " ".join(r.output.replace("│", " ").split())
    assert "defining ModelNew" in text and "pytorch" in text and "{level: source text}" in text


def test_initial_json_with_a_value_that_is_not_text_names_its_key(tmp_path, monkeypatch):
    """newcomer nc16: {"graph": "...", "schedule": 42} was told "expected a JSON object", which it is."""
    _root_only(monkeypatch)
    bad = tmp_path / "tvm_initial_bad.json"
    bad.write_text('{"graph": "this is not tvmscript", "schedule": 42}')
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--initial", str(bad),
                                 "--budget", "evals=1", "--out", str(tmp_path / "run")], env={"COLUMNS": "300"})
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "'schedule'" in text and "JSON int, not source text" in text, r.output
    assert "expected a JSON object" not in text
    bad.write_text('["graph"]')
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--initial", str(bad),
                                 "--budget", "evals=1", "--out", str(tmp_path / "run")], env={"COLUMNS": "300"})
    assert r.exit_code == 2 and "a JSON list, not an object" in " ".join(r.output.split()), r.output
