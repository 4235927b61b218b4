"""A full disk anywhere in optimize, export or report ends in one line saying
what did not fit and what to run once space is freed (for a run: the
``--resume`` command), and leaves nothing half-written (newcomer nc16: a
53-line ``OSError`` 28 traceback and an export of ``task.py`` and
``sources/`` only; ``sqlite3.OperationalError`` tracebacks from optimize
with no resume hint)."""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from kstrata.cli import export as E
from kstrata.cli.main import app
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.store import CandidateRecord, RunStore


@dataclass(frozen=True)
class _Task:
    name: str = "t"
    digest: str = hashlib.sha256(b"t").hexdigest()
    path: str = "t.py"


def _cand(text: str) -> CandidateRecord:
    sources = normalize_sources({"schedule": text})
    return CandidateRecord(hash=content_hash(sources, "fake", _Task().digest), sources=sources, level="schedule",
                           role="r", proposer="fake", parents=(), rationale="", router_reason="", metadata={},
                           backend="fake")


def test_a_store_write_that_does_not_fit_leaves_the_run_whole(tmp_path):
    with RunStore.create(tmp_path / "run", {}) as store:
        task_id = store.ensure_task(_Task())
        (pages,) = store.conn.execute("PRAGMA page_count").fetchone()
        store.conn.execute(f"PRAGMA max_page_count = {pages + 1}")  # SQLite's own "database or disk is full"
        big = _cand("x = 1\n" + "# pad\n" * 20000)
        with pytest.raises(sqlite3.OperationalError, match="disk is full"):
            store.add_candidate(big, task_id)
        assert not (tmp_path / "run" / "candidates" / big.hash).exists()  # its files went with the rollback
        assert store.candidates() == []
        store.conn.execute("PRAGMA max_page_count = 1073741823")  # space freed: the same write goes through
        assert store.add_candidate(big, task_id) and [c.hash for c in store.candidates()] == [big.hash]


@pytest.mark.parametrize("write", ["export", "import"])
def test_a_package_that_does_not_fit_is_not_half_written(tmp_path, monkeypatch, write):
    """export and import write their folder through kstrata.atomic.write_folder."""
    import kstrata.atomic as A
    import kstrata.cli.import_ as I

    assert E.write_folder is A.write_folder and I.write_folder is A.write_folder
    real = A._write_file
    files = {"task.py": "t", "sources/graph.py": "g", "kernel.so": b"\0" * 64, "export.json": "{}"}

    def full(path, data):
        if path.name == "kernel.so":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(A, "_write_file", full)
    with pytest.raises(OSError, match="kernel.so") as e:
        A.write_folder(tmp_path / "pkg", files)
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(tmp_path / "pkg" / "kernel.so")
    assert os.listdir(tmp_path) == []  # no package, no staging folder
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "use.py").write_text("mine")
    (tmp_path / "old" / "task.py").write_text("earlier")
    with pytest.raises(OSError):
        A.write_folder(tmp_path / "old", files)
    assert {p.name: p.read_text() for p in (tmp_path / "old").iterdir()} == {"use.py": "mine", "task.py": "earlier"}
    assert sorted(os.listdir(tmp_path)) == ["old"]
    monkeypatch.setattr(A, "_write_file", real)
    A.write_folder(tmp_path / "old", files)
    assert (tmp_path / "old" / "kernel.so").read_bytes() == files["kernel.so"]
    assert (tmp_path / "old" / "use.py").read_text() == "mine"


def test_report_to_a_full_disk_says_so_in_one_line(tmp_path, monkeypatch):
    import kstrata.report.html as H

    def full(path, text, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(H, "write_atomic", full)
    monkeypatch.setattr(H, "render_report", lambda path, **kw: "<html></html>")
    (tmp_path / "run").mkdir()
    res = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 1, res.output
    assert res.output.strip() == f"error: disk full writing {tmp_path / 'r.html'}; free space, then run the command again"


SCRIPT = textwrap.dedent("""
    import errno, sqlite3, sys
    from kstrata.search import loop
    from kstrata.cli.main import app

    KIND = sys.argv[2]

    def full_search(*args, **kwargs):
        if KIND == "sqlite":
            raise sqlite3.OperationalError("database or disk is full")
        raise OSError(errno.ENOSPC, "No space left on device", str(kwargs["run_dir"]) + "/candidates/ab/graph.py")

    loop.optimize = full_search
    sys.argv = ["kstrata", "optimize", "softmax", "--backend", "triton-interp", "--out", sys.argv[1]]
    app()
""")


@pytest.mark.parametrize("kind", ["sqlite", "oserror"])
def test_optimize_on_a_full_disk_prints_the_resume_command(tmp_path, kind):
    out = tmp_path / "my run"
    p = subprocess.run([sys.executable, "-c", SCRIPT, str(out), kind], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "TRITON_INTERPRET": "1"})
    text = p.stdout + p.stderr
    assert p.returncode == 1, text
    what = "the run store (run.db)" if kind == "sqlite" else f"{out}/candidates/ab/graph.py"
    assert (f"error: disk full writing {what}; free space, then continue the run (it is kept) with: "
            f"kstrata optimize softmax --backend triton-interp --resume '{out}'") in p.stderr, text
    assert "Traceback" not in text, text
