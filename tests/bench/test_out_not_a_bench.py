"""A new bench goes into a new or empty folder only, as a run and an export
do (newcomer nc16: ``--out`` a folder holding ``notes.txt`` wrote a run among
the user's files; a bench wrote ``bench.json`` and its runs the same way)."""

from __future__ import annotations

import pytest
from bench_helpers import make_bench

from kstrata.bench.harness import BenchError


def test_a_bench_refuses_a_folder_of_the_users_files(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes")
    with pytest.raises(BenchError, match=r"not a kstrata bench \(it holds notes\.txt\)"):
        make_bench(folder)
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
