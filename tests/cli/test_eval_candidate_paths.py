"""What ``kstrata eval`` takes as CANDIDATE (newcomer nc15): an export package
(``kstrata eval TASK l2_tvm`` said "no level files of pytorch (source.txt)") and
a run's ``candidates/<hash prefix>`` (refused as "no such candidate file",
though show and export take prefixes; now in test_nc27_cli_eval_prefix.py)."""

from __future__ import annotations

import json

import pytest

from kstrata.api import read_candidate

GRAPH, SCHEDULE = "# kstrata graph\n", "# kstrata schedule\n"


def _export(tmp_path, backend="tvm-llvm"):
    pkg = tmp_path / "l2_tvm"
    (pkg / "sources").mkdir(parents=True)
    (pkg / "sources" / "graph.py").write_text(GRAPH)
    (pkg / "sources" / "schedule.py").write_text(SCHEDULE)
    (pkg / "__init__.py").write_text("")
    (pkg / "export.json").write_text(json.dumps({"backend": backend, "shape": {}}))
    return pkg


def test_an_export_directory_reads_its_sources_and_backend(tmp_path):
    sources, backend = read_candidate(_export(tmp_path))
    assert backend == "tvm-llvm"
    assert sources == {"graph": GRAPH, "schedule": SCHEDULE}


def test_a_directory_without_level_files_points_at_its_sources_folder(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sources").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=r"its sources/ folder holds them: give .*pkg/sources"):
        read_candidate(pkg, "tvm-llvm")


# a run's candidates/<hash prefix>: tests/cli/test_nc27_cli_eval_prefix.py (resolved by the run's store)
