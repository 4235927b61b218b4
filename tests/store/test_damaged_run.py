"""A damaged run directory (case 20): a truncated or overwritten ``run.db`` is a
:class:`StoreError` (``error: RUN/run.db is damaged ...``, exit status 2) for
every command that opens it, and the file is left as it was; a deleted secret
is never silently replaced once candidates were judged with it."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.store import RunStore, StoreError
from kstrata.store.secret import SECRET_FILE, run_secret


@pytest.fixture(autouse=True)
def _no_env_secret(monkeypatch):
    monkeypatch.delenv("KSTRATA_SECRET", raising=False)


def _run(tmp_path, evaluations: int = 3):
    """A run directory with a secret and a few hundred ledger rows (a database of several pages)."""
    run = tmp_path / "run"
    secret = run_secret(run)
    with RunStore.create(run, config={"budget": {"evaluations": 8}}) as store:
        with store.transaction():
            for i in range(400):
                store.charge("wall_s", 0.5, ref=f"padding-{i:04d}-" + "x" * 200)
            for i in range(evaluations):
                store.charge("evaluations", 1, ref=f"c{i}")
    assert (run / "run.db").stat().st_size > 16384
    return run, secret


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _damage(run, how):
    db = run / "run.db"
    if how == "truncated":
        os.truncate(db, 4096)
    else:
        db.write_bytes(os.urandom(100_000))


@pytest.mark.parametrize("how", ["truncated", "garbage"])
def test_damaged_database_is_a_store_error_and_stays_as_it_was(tmp_path, how):
    run, _ = _run(tmp_path)
    _damage(run, how)
    before = _digest(run / "run.db")
    with pytest.raises(StoreError, match=r"run\.db is damaged \(.+\); start a new run with --out, or restore the file"):
        RunStore.open(run)
    runner = CliRunner()
    for args in (["tree", str(run)], ["show", str(run), "abc"], ["report", str(run)],
                 ["optimize", "relu", "--backend", "tvm-llvm", "--resume", str(run)],
                 ["optimize", "relu", "--backend", "tvm-llvm", "--resume", str(run), "--budget", "evals=9"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        lines = [ln for ln in res.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith(f"error: {run / 'run.db'} is damaged"), (args, res.output)
    assert _digest(run / "run.db") == before
    assert not (run / "run.db-wal").exists() or (run / "run.db-wal").stat().st_size == 0


def test_a_database_of_something_else_is_named_too(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    conn = sqlite3.connect(run / "run.db")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=r"run\.db is damaged \(no such table: schema_version\)"):
        RunStore.open(run)


def test_an_intact_run_still_opens(tmp_path):
    run, _ = _run(tmp_path)
    with RunStore.open(run) as store:
        assert store.spent()["evaluations"] == 3


def test_deleted_secret_of_a_judged_run_stops_the_resume(tmp_path):
    run, secret = _run(tmp_path)
    assert run_secret(run) == secret
    (run / SECRET_FILE).unlink()
    with pytest.raises(StoreError, match="secret is missing.*hidden tests.*Restore the file"):
        run_secret(run)
    assert not (run / SECRET_FILE).exists()
    (run / SECRET_FILE).write_text("")  # emptied: same as deleted
    with pytest.raises(StoreError, match="secret is missing or empty"):
        run_secret(run)
    res = CliRunner().invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--resume", str(run)])
    assert res.exit_code == 2 and "secret is missing" in res.output and "Traceback" not in res.output


def test_secret_of_a_run_that_judged_nothing_is_made(tmp_path, monkeypatch):
    run, _ = _run(tmp_path, evaluations=0)  # e.g. `kstrata mcp` creates the store, then the secret
    (run / SECRET_FILE).unlink()
    fresh = run_secret(run)
    assert len(fresh) == 64 and (run / SECRET_FILE).read_text().strip() == fresh
    assert (run / SECRET_FILE).stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv("KSTRATA_SECRET", "shared")
    (run / SECRET_FILE).unlink()
    assert run_secret(run) == "shared"


def test_a_binary_secret_and_a_candidates_file_are_named_not_tracebacks(tmp_path):
    """Red-team round of 2026-12-03: 64 random bytes in ``secret`` ended resume and
    retime in a UnicodeDecodeError traceback; ``candidates`` made a plain file, in
    a NotADirectoryError from a rolled-back transaction."""
    run, _ = _run(tmp_path)
    (run / SECRET_FILE).write_bytes(bytes(range(192, 256)))
    with pytest.raises(StoreError, match="secret is not a kstrata secret.*restore it"):
        run_secret(run)
    runner = CliRunner()
    for args in (["optimize", "relu", "--backend", "tvm-llvm", "--resume", str(run)],):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and "not a kstrata secret" in res.output and "Traceback" not in res.output, \
            (args, res.output)
    run_secret(tmp_path / "other")  # a good secret again, for the next damage
    (run / SECRET_FILE).write_text((tmp_path / "other" / SECRET_FILE).read_text())
    (run / "candidates").write_text("not a directory")
    with pytest.raises(StoreError, match="candidates is not a directory"):
        RunStore.open(run)
    res = runner.invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--resume", str(run)])
    assert res.exit_code == 2 and "candidates is not a directory" in res.output, res.output


@pytest.mark.parametrize("how", ["dropped_table", "dropped_column"])
def test_a_database_missing_part_of_the_schema_is_named_not_an_sql_error(tmp_path, how):
    # a table dropped by hand passed the open and `kstrata report` died on "no such table: budget_ledger"
    run, _ = _run(tmp_path)
    conn = sqlite3.connect(run / "run.db")
    if how == "dropped_table":
        conn.execute("DROP TABLE budget_ledger")
        want = "missing table budget_ledger"
    else:
        conn.execute("ALTER TABLE proposer_calls DROP COLUMN model")
        want = "missing column proposer_calls.model"
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=rf"run\.db is damaged \({want}\)"):
        RunStore.open(run)
    for args in (["tree", str(run)], ["report", str(run), "--out", str(tmp_path / "r.html")]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2 and "Traceback" not in res.output, (args, res.output)
        assert want in res.output


@pytest.mark.parametrize("text", ["not json", "[1, 2]", "\xff\xfe"])
def test_a_damaged_summary_is_a_store_error_that_says_retime_writes_it(tmp_path, text):
    from kstrata.store.run_store import read_summary

    run, _ = _run(tmp_path)
    assert read_summary(run) is None  # a run that has not ended has none
    (run / "summary.json").write_bytes(text.encode("latin-1"))
    with pytest.raises(StoreError, match=rf"summary\.json is damaged \(.+\); `kstrata retime {run}` writes it"):
        read_summary(run)
    (run / "summary.json").write_text('{"best": null}')
    assert read_summary(run) == {"best": None}


def test_another_secret_for_a_judged_run_stops_the_resume(tmp_path, monkeypatch):
    """A ``secret`` file copied from another run, or ``$KSTRATA_SECRET`` set to another value, was used
    without a word: the rest of the run was verified against another hidden set (found 2026-12-05)."""
    run, secret = _run(tmp_path)
    assert run_secret(run) == secret and (run / "secret.check").is_file()
    assert secret not in (run / "secret.check").read_text()
    (run / SECRET_FILE).write_text("ab" * 32 + "\n")
    with pytest.raises(StoreError, match="secret is not the secret this run's candidates were verified with"):
        run_secret(run)
    res = CliRunner().invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--resume", str(run)])
    assert res.exit_code == 2 and "not the secret this run" in res.output and "Traceback" not in res.output
    (run / SECRET_FILE).write_text(secret + "\n")
    monkeypatch.setenv("KSTRATA_SECRET", "shared")
    with pytest.raises(StoreError, match=r"\$KSTRATA_SECRET is not the secret this run"):
        run_secret(run)
    monkeypatch.setenv("KSTRATA_SECRET", secret)  # the run's own value is fine from either source
    assert run_secret(run) == secret
    monkeypatch.delenv("KSTRATA_SECRET")
    assert run_secret(run) == secret


def test_a_best_file_where_the_best_folder_goes_is_refused_before_the_search(tmp_path):
    """The lead's damaged-run battery (2026-12-06): ``best`` made a plain file let a
    resumed run search through its whole budget, then end in "best: File exists;
    this path cannot be used ... give another path" (no path to give)."""
    run, _ = _run(tmp_path)
    shutil.rmtree(run / "best", ignore_errors=True)
    (run / "best").write_text("not a directory")
    with pytest.raises(StoreError, match="best is not a directory.*move it away"):
        RunStore.open(run)
    res = CliRunner().invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--resume", str(run)])
    assert res.exit_code == 2 and "best is not a directory" in res.output and "evaluated" not in res.output, \
        res.output
