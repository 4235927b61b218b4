"""`tasks list --path DIR` counts candidate files (ModelNew, no Model) in one
line instead of a 'skipped: missing Model, ...' line each (newcomer nc14); a
file that is neither is still named with its problem."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.tasks.loader import resolve_task


def test_candidate_files_are_counted_not_listed_as_broken_tasks(tmp_path):
    (tmp_path / "relu.py").write_text(resolve_task("relu").source)
    for i in range(3):
        (tmp_path / f"cand{i}.py").write_text("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n")
    (tmp_path / "junk.py").write_text("x = 1\n")
    r = CliRunner().invoke(app, ["tasks", "list", "--path", str(tmp_path)], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "skipped 3 candidate file(s)" in r.output and "cand0.py" in r.output
    assert r.output.count("skipped:") == 1 and "junk.py: not a task, not imported" in r.output
    assert "relu" in r.output


def test_runs_exports_and_tilelang_candidates_are_not_listed_or_imported(tmp_path):
    """newcomer nc15: ``tasks list --path .`` walked into runs/ and export folders (an
    export's task.py listed as a task named "task") and, for a TileLang candidate,
    advised ``pip install tilelang`` into kstrata's environment."""
    (tmp_path / "relu.py").write_text(resolve_task("relu").source)
    export = tmp_path / "l2_tl"
    export.mkdir()
    (export / "export.json").write_text("{}")
    (export / "task.py").write_text(resolve_task("softmax").source)
    run = tmp_path / "runs" / "relu-tilelang-c-abc123"
    (run / "candidates" / "9db3").mkdir(parents=True)
    (run / "run.db").write_bytes(b"")
    (run / "candidates" / "9db3" / "task_copy.py").write_text(resolve_task("gelu").source)
    (tmp_path / "tl_ok.py").write_text("import tilelang\nimport torch\n\n\nclass ModelNew(torch.nn.Module):\n"
                                       "    pass\n")
    r = CliRunner().invoke(app, ["tasks", "list", "--path", str(tmp_path)], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "1 tasks" in r.output and " softmax " not in r.output and " gelu " not in r.output
    assert "skipped 2 folder(s) of kstrata's own output" in r.output and "l2_tl" in r.output, r.output
    assert "skipped 1 candidate file(s)" in r.output and "tl_ok.py" in r.output
    assert "pip install tilelang" not in r.output and "skipped:" not in r.output


def test_a_task_importing_tilelang_is_not_told_to_pip_install_it(tmp_path):
    from kstrata.tasks.loader import load_dir_lenient

    (tmp_path / "tl_task.py").write_text("import tilelang\nclass Model:\n    pass\n"
                                         "def get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n")
    _, problems = load_dir_lenient(tmp_path)
    assert len(problems) == 1
    assert "pip install" not in str(problems[0]) and "kstrata setup" in str(problems[0]), problems[0]


def test_a_strict_load_skips_kstrata_folders_too(tmp_path):
    """``load_dir`` (bench --suite DIR, mcp --tasks DIR) leaves a run inside the folder alone."""
    from kstrata.tasks.loader import load_dir

    (tmp_path / "relu.py").write_text(resolve_task("relu").source)
    run = tmp_path / "runs" / "relu-pytorch-abc123"
    run.mkdir(parents=True)
    (run / "run.db").write_bytes(b"")
    (run / "task.py").write_text(resolve_task("relu").source)  # a copy: the same task name again
    assert [t.name for t in load_dir(tmp_path)] == ["relu"]
