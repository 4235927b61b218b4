"""``kstrata show RUN [CAND] --json`` prints one JSON object, as ``kstrata eval
--json`` does (newcomer nc21: it printed the text view with only the feedback as
JSON, and a compile_error candidate's output was the text view alone)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.search import Budget, optimize

sys.path.insert(0, str(Path(__file__).parents[1] / "search"))
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask  # noqa: E402


class CompileError:
    def evaluate(self, task, backend, srcs):
        return {"verdict": "compile_error", "check": "load", "evidence": {"message": "NameError: name 'x'"}}, None


def _run(tmp_path, evaluator):
    return optimize(FakeTask(), FakeBackend(), FakeProposer(), evaluator, "greedy", Budget(evaluations=1),
                    tmp_path / "run", initial_sources={"graph": "fuse=0\n", "schedule": "tile=1\norder=0\n"})


def test_show_json_of_a_failed_candidate_is_one_json_object(tmp_path):
    res = _run(tmp_path, CompileError())
    r = CliRunner().invoke(app, ["show", str(res.run_dir), res.tree.root.hash[:8], "--json"])
    assert r.exit_code == 0, r.output
    shown = json.loads(r.output)
    assert shown["hash"] == res.tree.root.hash and shown["best"] is False
    assert shown["verdict"] == "compile_error" and shown["check"] == "load"
    assert shown["evidence"]["message"] == "NameError: name 'x'"
    assert shown["sources"] == {"graph": "fuse=0\n", "schedule": "tile=1\norder=0\n"}


def test_show_json_of_the_best_says_so_and_gives_its_timing(tmp_path):
    res = _run(tmp_path, FakeEvaluator())
    r = CliRunner().invoke(app, ["show", str(res.run_dir), "--json"])
    assert r.exit_code == 0, r.output
    shown = json.loads(r.output)
    assert shown["best"] is True and shown["note"].startswith("showing the run's best")
    assert shown["verdict"] == "correct" and shown["timing"]["speedups"], shown
    assert shown["path_to_root"] == [res.tree.root.hash]
