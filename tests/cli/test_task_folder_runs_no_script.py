"""Discovering the tasks of a folder runs no file that is not a task by its text
(newcomer nc21: ``tasks list --path DIR`` imported a helper script beside the
tasks, which wrote a file and printed into the listing; ``tasks show --path``
and ``bench DIR`` imported every file of the folder; a name looked up in the
folder answered with another file's error)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import load_dir, load_dir_lenient, resolve_task

SCRIPT = ("import pathlib\n"
          "pathlib.Path(__file__).with_name('SIDE_EFFECT_RAN').write_text('ran')\n"
          "print('helper: generating report ...')\n")


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "relu.py").write_text(resolve_task("relu").source)
    (tmp_path / "make_report.py").write_text(SCRIPT)
    (tmp_path / "use_export.py").write_text(SCRIPT + "from my_export import KernelModule\n")
    # defines get_inputs in a function body only: not a task's top-level name
    (tmp_path / "nested.py").write_text(SCRIPT + "class Model:\n    pass\ndef f():\n    def get_inputs():\n"
                                        "        return []\n    def get_init_inputs():\n        return []\n")
    return tmp_path


def test_tasks_list_skips_scripts_with_why_and_runs_none(folder):
    r = CliRunner().invoke(app, ["tasks", "list", "--path", str(folder)], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())  # rich wraps long lines
    assert not (folder / "SIDE_EFFECT_RAN").exists()
    assert "generating report" not in r.output and "pip install" not in r.output
    assert "1 tasks" in r.output and "relu" in r.output, r.output
    for name in ("make_report.py", "use_export.py"):
        assert f"{name}: not a task, not imported: its text defines no Model, get_inputs, get_init_inputs" \
            in text, r.output
    assert "nested.py: not a task, not imported: its text defines no get_inputs, get_init_inputs" in text, r.output


def test_every_folder_discovery_runs_no_script(folder):
    from kstrata.bench.harness import resolve_suite

    tasks, problems = load_dir_lenient(folder)
    assert [t.name for t in tasks] == ["relu"] and len(problems) == 3
    assert resolve_task("relu", folder).name == "relu"  # tasks show --path, mcp --tasks
    with pytest.raises(TaskError, match=r"make_report\.py: not a task, not imported"):
        resolve_task("make_report", folder)  # its own reason, not another file's
    with pytest.raises(TaskError, match=r"use_export\.py: not a task"):
        resolve_task("use_export", folder)
    with pytest.raises(TaskError, match="not a task, not imported"):
        load_dir(folder)  # tasks check --path, bench DIR: refused, not run
    with pytest.raises(TaskError, match="not a task, not imported"):
        resolve_suite(str(folder))
    assert [t.name for t in resolve_suite(str(folder), ["relu"])] == ["relu"]
    assert not (folder / "SIDE_EFFECT_RAN").exists()


def test_a_task_in_a_block_or_by_assignment_still_loads(tmp_path):
    (tmp_path / "t.py").write_text("import torch\ntry:\n    import numpy\nexcept ImportError:\n    pass\n"
                                   "if True:\n    class Base(torch.nn.Module):\n        def forward(self, x):\n"
                                   "            return x\nModel = Base\nget_inputs = lambda: [torch.randn(4)]\n"
                                   "def get_init_inputs():\n    return []\n")
    assert [t.name for t in load_dir(tmp_path)] == ["t"]


def test_the_suite_reads_as_tasks():
    from kstrata.tasks.loader import SUITE_DIR, not_a_task_reason

    assert [p.name for p in sorted(SUITE_DIR.rglob("*.py"))
            if not p.name.startswith("_") and not_a_task_reason(p)] == []


def test_a_script_named_as_a_task_file_is_not_run(folder):
    r = CliRunner().invoke(app, ["tasks", "show", str(folder / "make_report.py")], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert "make_report.py: not a task, not imported" in " ".join(r.output.split()), r.output
    assert not (folder / "SIDE_EFFECT_RAN").exists()
    # a star import may bring the names: a file the user names is imported (and judged) then
    (folder / "star.py").write_text("from relu import *\n")
    with pytest.raises(TaskError, match="failed to import: ModuleNotFoundError"):
        resolve_task(str(folder / "star.py"))
