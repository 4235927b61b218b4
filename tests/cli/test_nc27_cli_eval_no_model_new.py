"""``kstrata eval`` of a file that defines ``class MyModel`` instead of ``ModelNew`` says so at once,
with ``kstrata import``'s message naming the class it found (newcomer nc27: ~60 s on a busy machine
for the judge's "candidate defines no ModelNew(torch.nn.Module)", while import refused the same file
at once). Read from lines, never imported here; the verdict is the judge's (compile_error, load)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kstrata.cli.import_ import read_model_file
from kstrata.cli.main import app
from kstrata.tasks.errors import TaskError

MY_MODEL = ("import torch\n\nclass MyModel(torch.nn.Module):\n    def forward(self, x):\n"
            "        return torch.softmax(x, dim=1)\n")


def _no_judge(*a, **k):
    raise AssertionError("the judge was started for a file that defines no ModelNew")


def test_eval_of_a_file_without_model_new_is_told_before_the_judge(tmp_path, monkeypatch):
    bad = tmp_path / "bad_class.py"
    bad.write_text(MY_MODEL)
    monkeypatch.setattr("kstrata.cli.eval.evaluate_sources", _no_judge)
    r = CliRunner().invoke(app, ["eval", "softmax", str(bad), "--json"])
    assert r.exit_code == 0, r.output
    ev = json.loads(r.output[r.output.index("{"):])
    assert (ev["verdict"], ev["check"]) == ("compile_error", "load"), ev
    assert "defines no class ModelNew (KernelBench format" in ev["message"] and "class MyModel" in ev["message"]
    with pytest.raises(TaskError, match="defines no class ModelNew .*it defines class MyModel"):
        read_model_file(bad)  # import's message: the same check


def test_a_model_new_made_otherwise_is_left_to_the_judge(tmp_path, monkeypatch):
    alias = tmp_path / "alias.py"
    alias.write_text(MY_MODEL + "\nModelNew = MyModel\n")
    seen = []

    def judge(*a, **k):
        seen.append(1)
        raise KeyboardInterrupt  # stands in for the judge: it was reached

    monkeypatch.setattr("kstrata.cli.eval.evaluate_sources", judge)
    r = CliRunner().invoke(app, ["eval", "softmax", str(alias), "--no-time"])
    assert seen and "interrupted" in r.output, r.output
