"""A new run goes into a new or empty folder only, as an export does
(newcomer nc16: ``--out DIR`` where DIR held the user's ``notes.txt`` wrote
the run's files among them)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask  # noqa: E402

from kstrata.cli.main import app  # noqa: E402
from kstrata.search import Budget, optimize  # noqa: E402
from kstrata.store.run_store import RunStore, StoreError  # noqa: E402


@pytest.fixture
def notes(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes")
    return folder


def test_optimize_refuses_a_folder_of_the_users_files(notes):
    r = CliRunner().invoke(app, ["optimize", "softmax", "--backend", "triton-interp", "--out", str(notes),
                                 "--budget", "evals=1"], env={"COLUMNS": "400", "TRITON_INTERPRET": "1"})
    assert r.exit_code == 2, r.output
    assert f"--out {notes}: a non-empty folder that is not a kstrata run (it holds notes.txt)" in r.output, r.output
    assert [p.name for p in notes.iterdir()] == ["notes.txt"]


def test_the_library_refuses_it_too_and_writes_nothing_there(notes):
    with pytest.raises(StoreError, match="not a kstrata run"):
        optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=1), notes)
    with pytest.raises(StoreError, match=r"it holds notes\.txt"):
        RunStore.create(notes, {})
    assert [p.name for p in notes.iterdir()] == ["notes.txt"]


def test_an_empty_folder_or_one_with_kstratas_own_start_is_taken(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "secret").write_text("x" * 64)  # what an earlier start that stopped early left
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=1), empty)
    assert RunStore.exists(res.run_dir)
