"""The run store: ``RUN_DIR/run.db`` (SQLite, WAL, foreign keys) plus artifacts.

Every write is one transaction. Artifacts a transaction refers to are written
(temp file + rename) before it commits; if it rolls back, the artifact folders
it created are removed again, so neither half rows nor orphan files remain.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from kstrata import __version__
from kstrata.shellarg import arg
from kstrata.store import artifacts, row_check
from kstrata.store.records import (
    CandidateRecord,
    EvaluationRecord,
    ExpansionRecord,
    MeasurementRecord,
    Speedup,
    dumps,
    jsonable,
)
from kstrata.store.schema import DDL, MIGRATIONS, PRAGMAS, READONLY_PRAGMAS, SCHEMA_VERSION

DB_NAME = "run.db"


class StoreError(RuntimeError):
    """A run directory that cannot be used (missing, newer schema, wrong run)."""


@lru_cache(maxsize=1)
def _expected_columns() -> dict[str, frozenset[str]]:
    """``{table: column names}`` of the current schema (:data:`DDL` built in memory)."""
    mem = sqlite3.connect(":memory:")
    try:
        mem.executescript(DDL)
        return _columns(mem)
    finally:
        mem.close()


def _columns(conn: sqlite3.Connection) -> dict[str, frozenset[str]]:
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: frozenset(r[1] for r in conn.execute(f"PRAGMA table_info({t!r})")) for t in tables}


def missing_columns(conn: sqlite3.Connection) -> list[str]:
    """What the current schema has and the database lacks: ``"table T"`` or
    ``"column T.C"`` entries (empty for a whole database). A table dropped or
    rebuilt without a column by hand would otherwise surface as an SQL error
    in whichever command first reads it."""
    have = _columns(conn)
    out = []
    for table, cols in sorted(_expected_columns().items()):
        if table not in have:
            out.append(f"table {table}")
        else:
            out += [f"column {table}.{c}" for c in sorted(cols - have[table])]
    return out


def no_run_here(run_dir: str | Path) -> str:
    """Why ``run_dir`` holds no run, in one line: no such directory (newcomer nc16: ``export /nonexistent``
    was asked "is this a kstrata run directory?"), a file, or a directory without ``run.db``."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        return f"{run_dir}: no such directory; give a run's directory (the --out of kstrata optimize)"
    if not run_dir.is_dir():
        return f"{run_dir}: a file, not a run's directory; give the directory (the --out of kstrata optimize)"
    return f"{run_dir}: no {DB_NAME}; is this a kstrata run directory?"


def read_summary(run_dir: str | Path) -> dict[str, Any] | None:
    """``RUN/summary.json`` (written when a run ends), ``None`` when the run has none yet.

    Raises
    ------
    StoreError
        When the file is unreadable or not a JSON object (say, overwritten by hand):
        ``kstrata retime RUN`` writes it again from ``run.db``.
    """
    path = Path(run_dir) / "summary.json"
    if not path.is_file():
        return None
    try:
        summary = json.loads(path.read_text())
        why = None if isinstance(summary, dict) else f"a JSON {type(summary).__name__}, not an object"
    except (OSError, UnicodeDecodeError, ValueError) as e:
        why = str(e)
    except RecursionError:  # nested too deep (red team rt51)
        why = "JSON nested too deep"
    if why is not None:
        raise StoreError(f"{path} is damaged ({why}); `kstrata retime {arg(run_dir)}` writes it again from run.db")
    return summary


def database_error(path: Path, err: sqlite3.DatabaseError) -> StoreError:
    """The :class:`StoreError` for a run database SQLite refuses: in use by
    another process, or damaged (truncated, overwritten, not a kstrata run).
    The file is left as it is."""
    text = " ".join(str(err).split())
    if isinstance(err, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return StoreError(f"{path} is in use by another process ({text}); wait for it to finish "
                          "or stop it, then try again")
    return StoreError(f"{path} is damaged ({text}); start a new run with --out, or restore the file")


#: What kstrata itself may have put in a run folder before its run.db exists (a start that stopped early):
#: the lock, the run secret and its fingerprint, the config and the database being made.
OWN_BEFORE_DB = frozenset({"run.lock", "secret", "secret.check", "config.json", DB_NAME + ".init",
                           DB_NAME + ".init-wal", DB_NAME + ".init-shm"})


def foreign_folder(folder: str | Path, own: Collection[str] = OWN_BEFORE_DB, what: str = "run") -> str | None:
    """Why a new kstrata ``what`` (a run, a bench) may not be written into
    ``folder``, naming at most 3 of the entries it would be written among
    (anything but ``own``, what kstrata itself may have put there first), or
    ``None`` for a missing or empty folder. A new run goes into a new or empty
    folder only, as an export does (newcomer nc16: ``--out`` a folder holding
    ``notes.txt`` wrote the run among the user's files)."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    held = sorted(p.name for p in folder.iterdir() if p.name not in own)[:3]
    if not held:
        return None
    return (f"a non-empty folder that is not a kstrata {what} (it holds {', '.join(held)}); choose a new or empty "
            f"folder for the {what}")


def writable(run_dir: str | Path) -> bool:
    """Whether ``run_dir`` and its ``run.db`` can be written by this process
    (``False`` on a read-only mount or a folder of another user's)."""
    run_dir = Path(run_dir)
    db = run_dir / DB_NAME
    return os.access(run_dir, os.W_OK) and (not db.exists() or os.access(db, os.W_OK))


def not_writable(run_dir: str | Path, why: str) -> StoreError:
    """The :class:`StoreError` for a write to a run folder that cannot be
    written (``why``: what needed the write)."""
    return StoreError(f"{run_dir} is not writable (a read-only folder or another user's) and {why}; "
                      f"copy it to a writable place (cp -r {arg(run_dir)} DIR) and use the copy")


def readonly_uri(path: Path) -> str:
    """An SQLite URI that reads ``path`` without writing anything beside it.

    A WAL database opened ``mode=ro`` still needs its ``-shm`` file, which a
    read-only folder cannot get (SQLite then said "unable to open database
    file", shown as "run.db is damaged": newcomer nc16); ``immutable=1``
    needs none, and is exact when no write-ahead log holds unmerged pages (a
    run's last connection merges and removes it). A log that does is read
    through ``mode=ro`` where its ``-shm`` exists.

    Raises
    ------
    StoreError
        When the log holds pages and there is no ``-shm`` to read it with.
    """
    from urllib.parse import quote

    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    has_log = wal.is_file() and wal.stat().st_size > 0
    if has_log and not shm.is_file():
        raise not_writable(path.parent, f"{DB_NAME}'s write-ahead log ({wal.name}) was not merged into it")
    return f"file:{quote(str(path.resolve()))}?" + ("mode=ro" if has_log else "immutable=1")


def _loads(text: Any, what: str) -> Any:
    """``json.loads(text)`` of a JSON column of run.db (``what`` names it).

    Raises
    ------
    StoreError
        When the text is not JSON, or JSON nested too deep or holding an int
        too long to read (``RecursionError``/``ValueError``): run.db is data
        anyone could have edited, and ``kstrata show`` ended in a
        ``RecursionError`` traceback on it (red team rt51)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError) as e:
        raise StoreError(f"run.db is damaged: {what} is not usable JSON ({type(e).__name__}); start a new run "
                         "with --out, or restore the file") from None


def unsafe_names(conn: sqlite3.Connection) -> str | None:
    """The first candidate hash or level name in the database that is not one
    plain name (:func:`kstrata.store.artifacts.candidate_dir`,
    :func:`~kstrata.store.artifacts.safe_level`), described; ``None`` when all
    are. Both become paths (``candidates/<hash>/<level>.<ext>``, ``best/``,
    an export's ``sources/``), so an edited run.db with a level
    ``../../x`` would have kstrata write outside the run directory."""
    for (digest,) in conn.execute("SELECT hash FROM candidates UNION SELECT candidate FROM sources"):
        try:
            artifacts.candidate_dir(Path("."), digest)
        except artifacts.UnsafeName as e:
            return f"candidate {e}"
    for (level,) in conn.execute("SELECT DISTINCT level FROM sources"):
        try:
            artifacts.safe_level(level)
        except artifacts.UnsafeName as e:
            return f"a source's level {e}"
    return None


def _call_field(call: Any, name: str, default: Any) -> Any:
    if isinstance(call, dict):
        return call.get(name, default)
    return getattr(call, name, default)


class RunStore:
    """One run's database and artifact folder.

    Use :meth:`create` for a new run and :meth:`open` to resume or read one.
    Not thread-safe; one writer process at a time (SQLite's lock serializes
    others, waiting up to ``busy_timeout`` = 10 s).
    """

    def __init__(self, run_dir: Path, conn: sqlite3.Connection, readonly: bool = False):
        self.run_dir = Path(run_dir)
        self.conn = conn
        self._readonly = readonly
        self._depth = 0
        self._created_paths: list[Path] = []

    # -- opening -----------------------------------------------------------
    @staticmethod
    def _connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
        """Open ``path`` with :data:`PRAGMAS` set, or (``readonly``: its folder
        cannot be written) for reading only (:func:`readonly_uri`).

        Raises
        ------
        StoreError
            If SQLite cannot use the file (see :func:`database_error`).
        """
        try:
            if readonly:
                conn = sqlite3.connect(readonly_uri(path), isolation_level=None, timeout=10.0, uri=True)
            else:
                conn = sqlite3.connect(path, isolation_level=None, timeout=10.0)
        except sqlite3.DatabaseError as e:
            raise database_error(path, e) from None
        conn.row_factory = sqlite3.Row
        try:
            for pragma in (READONLY_PRAGMAS if readonly else PRAGMAS):
                conn.execute(pragma)
        except sqlite3.DatabaseError as e:
            conn.close()
            raise database_error(path, e) from None
        return conn

    @property
    def readonly(self) -> bool:
        """Whether the run was opened for reading only (its folder cannot be
        written: a read-only mount, another user's run); a write raises
        :class:`StoreError` saying so (:func:`not_writable`)."""
        return bool(self._readonly)

    @classmethod
    def exists(cls, run_dir: str | Path) -> bool:
        """Whether ``run_dir`` holds a run database."""
        return (Path(run_dir) / DB_NAME).is_file()

    @classmethod
    def create(cls, run_dir: str | Path, config: dict[str, Any], seed: int = 0) -> RunStore:
        """Make a new run in ``run_dir`` (created if needed) and save the resolved
        ``config`` in the database and as ``config.json``.

        Raises
        ------
        StoreError
            If ``run_dir`` already holds a run (resume it with :meth:`open`).
        """
        run_dir = Path(run_dir)
        cls.check_new(run_dir)
        from kstrata.store.secret import CONFIG_KEY, stored_fingerprint

        fingerprint = stored_fingerprint(run_dir)  # the secret's, kept in run.db too (red team rt71)
        if fingerprint and CONFIG_KEY not in config:
            config = {**config, CONFIG_KEY: fingerprint}
        run_dir.mkdir(parents=True, exist_ok=True)
        tmp = run_dir / (DB_NAME + ".init")
        made = (run_dir / "config.json", tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm"))
        for stale in made[1:]:
            stale.unlink(missing_ok=True)
        try:
            artifacts.write_atomic(run_dir / "config.json", json.dumps(jsonable(config), indent=2) + "\n")
            conn = cls._connect(tmp)
            try:
                conn.executescript("BEGIN;" + DDL + "COMMIT;")
                conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
                conn.execute(
                    "INSERT INTO run (id, created, kstrata_version, seed, config_json) VALUES (1,?,?,?,?)",
                    (time.time(), __version__, int(seed), dumps(config)),
                )
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                conn.close()
        except BaseException:  # a full disk, say: no half run is left for the next try to trip on
            for path in made:
                path.unlink(missing_ok=True)
            raise
        tmp.replace(run_dir / DB_NAME)  # a half-initialized database is never visible
        return cls.open(run_dir)

    @classmethod
    def check_new(cls, run_dir: str | Path) -> None:
        """Refuse ``run_dir`` for a new run before anything is written there.

        Raises
        ------
        StoreError
            If it already holds a run, or is a non-empty folder that is not
            a kstrata run (:func:`foreign_folder`).
        """
        if cls.exists(run_dir):
            raise StoreError(f"{run_dir} already holds a run; resume it or choose another --out")
        foreign = foreign_folder(run_dir)
        if foreign:
            raise StoreError(f"{run_dir} is {foreign}")

    @classmethod
    def open(cls, run_dir: str | Path) -> RunStore:
        """Open an existing run, upgrading its schema if older.

        Raises
        ------
        StoreError
            If there is no ``run.db``, its schema is newer than this kstrata, or
            SQLite finds it damaged (``PRAGMA quick_check``: a truncated file,
            or one that is not a database) or cannot use it.
        """
        run_dir = Path(run_dir)
        if not cls.exists(run_dir):
            raise StoreError(no_run_here(run_dir))
        cands = run_dir / "candidates"
        if cands.exists() and not cands.is_dir():
            raise StoreError(f"{cands} is not a directory (it holds each candidate's sources); restore it "
                             "from a copy of the run, or start a new run with --out")
        best = run_dir / "best"
        if best.exists() and not best.is_dir():  # a resumed run wrote its best there after its whole search
            raise StoreError(f"{best} is not a directory (it holds the run's best candidate, written again when a "
                             f"run ends); move it away, then run the command again")
        path = run_dir / DB_NAME
        readonly = not writable(run_dir)
        conn = cls._connect(path, readonly)
        try:
            problems = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
            if problems != ["ok"]:
                raise sqlite3.DatabaseError("; ".join(problems))
            rows = conn.execute("SELECT version FROM schema_version").fetchall()
            version = rows[0][0] if len(rows) == 1 else None
            if type(version) is not int or not 1 <= version:  # a hand-edited row (red team rt62: a traceback)
                raise sqlite3.DatabaseError(f"its schema_version table holds {[r[0] for r in rows][:3]!r}, not one "
                                            "version number")
        except sqlite3.DatabaseError as e:
            conn.close()
            raise database_error(path, e) from None
        if version > SCHEMA_VERSION:
            conn.close()
            raise StoreError(
                f"{run_dir}: schema version {version} is newer than this kstrata's "
                f"{SCHEMA_VERSION}; upgrade kstrata"
            )
        if readonly and version < SCHEMA_VERSION:
            conn.close()
            raise not_writable(run_dir, f"its schema (version {version}) must be upgraded to read it")
        store = cls(run_dir, conn, readonly)
        for v in range(version + 1, SCHEMA_VERSION + 1):
            with store.transaction():
                conn.executescript(MIGRATIONS[v])
                conn.execute("UPDATE schema_version SET version = ?", (v,))
        missing = missing_columns(conn)
        if missing:
            conn.close()
            raise database_error(path, sqlite3.DatabaseError(f"missing {'; '.join(missing)}"))
        unsafe = unsafe_names(conn)
        if unsafe:
            conn.close()
            raise database_error(path, sqlite3.DatabaseError(unsafe))
        return store

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``; on any exception ``ROLLBACK``, remove
        the artifact paths created inside it, and re-raise. Nested uses join
        the outer transaction."""
        if self._readonly:
            raise not_writable(self.run_dir, "this command stores to it")
        if self._depth:
            self._depth += 1
            try:
                yield self.conn
            finally:
                self._depth -= 1
            return
        self.conn.execute("BEGIN IMMEDIATE")
        self._depth = 1
        self._created_paths = []
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.OperationalError:  # SQLite rolled back itself (a full disk: SQLITE_FULL)
                pass
            for path in reversed(self._created_paths):
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
            raise
        finally:
            self._depth = 0
            self._created_paths = []

    def _artifact(self, path: Path, text: str) -> Path:
        """Write an artifact inside the current transaction (undone on rollback)."""
        assert self._depth, "artifacts are written inside a transaction"
        if not path.parent.exists():
            top = path.parent
            while not top.parent.exists():
                top = top.parent
            self._created_paths.append(top)
        elif not path.exists():
            self._created_paths.append(path)
        return artifacts.write_in_run(self.run_dir, path, text)

    # -- run and tasks -----------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        """The run's config as stored in run.db, each entry kstrata reads back of
        the kind it writes.

        Raises
        ------
        StoreError
            When it is not JSON, or an entry is of another kind
            (:func:`kstrata.store.row_check.check_config`)."""
        return row_check.check_config(
            _loads(self.conn.execute("SELECT config_json FROM run").fetchone()[0], "the run's config"), self._damaged)

    def update_config(self, changes: dict[str, Any]) -> None:
        """Replace top-level keys of the run's config (one transaction): a
        resume's ``--budget`` is the run's total from then on (newcomer nc17:
        the next resume without ``--budget`` read the creation's budget back
        and said "6 of 4 evaluations done")."""
        config = {**self.config, **changes}
        with self.transaction() as conn:
            conn.execute("UPDATE run SET config_json = ?", (dumps(config),))
            self._artifact(self.run_dir / "config.json", json.dumps(jsonable(config), indent=2) + "\n")

    @property
    def seed(self) -> int:
        return int(self.conn.execute("SELECT seed FROM run").fetchone()[0])

    def ensure_task(self, task: Any) -> int:
        """Row id of ``task`` (anything with ``name`` and ``digest``), inserted if new."""
        meta = getattr(task, "meta", None)
        with self.transaction() as c:
            c.execute(
                "INSERT OR IGNORE INTO tasks (name, digest, path, meta_json) VALUES (?,?,?,?)",
                (task.name, task.digest, str(getattr(task, "path", "")), dumps(meta)),
            )
            row = c.execute(
                "SELECT id FROM tasks WHERE name = ? AND digest = ?", (task.name, task.digest)
            ).fetchone()
        return int(row[0])

    def tasks(self) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT * FROM tasks ORDER BY id").fetchall()
        return [dict(r) | {"meta": _loads(r["meta_json"], "a task's meta_json")} for r in rows]

    # -- writes ------------------------------------------------------------
    def add_candidate(
        self,
        cand: CandidateRecord,
        task_id: int,
        extensions: dict[str, str] | None = None,
    ) -> bool:
        """Insert ``cand`` (status ``pending``) with its parents, sources, source
        files and a diff to its first parent. Returns False (and writes nothing)
        when a candidate with that hash exists.

        Raises
        ------
        sqlite3.IntegrityError
            If a parent is unknown; the transaction is rolled back.
        """
        extensions = extensions or {}
        with self.transaction() as c:
            if self.has_candidate(cand.hash):
                return False
            depth = 0
            if cand.parents:
                rows = c.execute(
                    f"SELECT MAX(depth) FROM candidates WHERE hash IN "
                    f"({','.join('?' * len(cand.parents))})",
                    cand.parents,
                ).fetchone()
                depth = (rows[0] if rows[0] is not None else -1) + 1
            (seq,) = c.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM candidates").fetchone()
            c.execute(
                "INSERT INTO candidates (hash, seq, task_id, backend, level, role, proposer,"
                " rationale, router_reason, metadata_json, expansion_id, depth, status, created)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?, 'pending', ?)",
                (
                    cand.hash, seq, task_id, cand.backend, cand.level, cand.role, cand.proposer,
                    cand.rationale, cand.router_reason, dumps(cand.metadata), cand.expansion_id,
                    depth, time.time(),
                ),
            )
            c.executemany(
                "INSERT INTO candidate_parents (child, parent, position) VALUES (?,?,?)",
                [(cand.hash, p, i) for i, p in enumerate(cand.parents)],
            )
            for level, text in sorted(cand.sources.items()):
                path = artifacts.source_path(self.run_dir, cand.hash, level, extensions)
                self._artifact(path, text)
                c.execute(
                    "INSERT INTO sources (candidate, level, text, path) VALUES (?,?,?,?)",
                    (cand.hash, level, text, str(path.relative_to(self.run_dir))),
                )
            if cand.parents:
                diff = artifacts.unified_diff(self.sources(cand.parents[0]), cand.sources)
                self._artifact(artifacts.candidate_dir(self.run_dir, cand.hash) / "diff.patch", diff)
        return True

    def add_expansion(self, exp: ExpansionRecord, calls: Iterable[Any] = (), min_calls: int = 1) -> int:
        """Insert an expansion and its proposer calls (objects or dicts with the
        fields of :class:`kstrata.agents.base.ProposerCall`), charging the ledger
        for calls, tokens, cost and wall time. Returns the expansion id.

        ``min_calls`` is charged when ``calls`` is empty: 1 for a propose that
        reports no model calls (rule-based), 0 for one that failed before any
        call (a prompt that did not render reached no model)."""
        now = time.time()
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO expansions (candidate, level, kind, anchor, policy_reason,"
                " router_reason, proposer, n_proposals, n_new, n_duplicate, n_malformed, error,"
                " wall_s, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    exp.candidate, exp.level, exp.kind, exp.anchor, exp.policy_reason,
                    exp.router_reason, exp.proposer, exp.n_proposals, exp.n_new,
                    exp.n_duplicate, exp.n_malformed, exp.error, exp.wall_s, now,
                ),
            )
            exp_id = int(cur.lastrowid)
            n_calls = 0
            for call in calls:
                n_calls += 1
                values = {
                    k: _call_field(call, k, d)
                    for k, d in (
                        ("provider", ""), ("model", ""), ("prompt", ""), ("response", ""),
                        ("tokens_in", 0), ("tokens_out", 0), ("cost_usd", 0.0),
                        ("latency_s", 0.0), ("error", None),
                    )
                }
                c.execute(
                    "INSERT INTO proposer_calls (expansion_id, provider, model, prompt, response,"
                    " tokens_in, tokens_out, cost_usd, latency_s, error, created)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (exp_id, *values.values(), now),
                )
                for kind in ("tokens_in", "tokens_out", "cost_usd"):
                    if values[kind]:
                        self.charge(kind, float(values[kind]), f"expansion:{exp_id}")
            # a propose call that reports no model calls (rule-based) counts as min_calls
            if max(min_calls, n_calls):
                self.charge("proposer_calls", max(min_calls, n_calls), f"expansion:{exp_id}")
            self.charge("expansions", 1, f"expansion:{exp_id}")
            self.charge("wall_s", exp.wall_s, f"expansion:{exp_id}")
        return exp_id

    def update_expansion(self, exp_id: int, **counts: int) -> None:
        """Set ``n_new``/``n_duplicate``/``n_malformed``/``n_proposals`` of an expansion."""
        allowed = {"n_new", "n_duplicate", "n_malformed", "n_proposals"}
        assert set(counts) <= allowed, set(counts) - allowed
        with self.transaction() as c:
            for k, v in counts.items():
                c.execute(f"UPDATE expansions SET {k} = ? WHERE id = ?", (v, exp_id))

    def record_evaluation(
        self,
        digest: str,
        evaluation: EvaluationRecord,
        measurement: MeasurementRecord | None = None,
        slower_at_creation: bool | None = None,
        wall_s: float = 0.0,
    ) -> None:
        """Store the evaluation (and measurement) of a pending candidate and mark
        it ``evaluated``, all in one transaction, charging one evaluation and
        ``wall_s`` seconds to the ledger.

        Raises
        ------
        StoreError
            If the candidate is unknown or already evaluated (evaluations are
            never repeated).
        """
        with self.transaction() as c:
            row = c.execute("SELECT status FROM candidates WHERE hash = ?", (digest,)).fetchone()
            if row is None or row[0] != "pending":
                raise StoreError(f"candidate {digest[:12]} is {row[0] if row else 'unknown'}")
            log_path = None
            if evaluation.build_log:
                path = artifacts.candidate_dir(self.run_dir, digest) / "build.log"
                self._artifact(path, evaluation.build_log)
                log_path = str(path.relative_to(self.run_dir))
            c.execute(
                "INSERT INTO evaluations (candidate, verdict, check_name, evidence_json,"
                " feedback_json, n_public, n_hidden, build_log_path, wall_s, created)"
                " VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    digest, str(evaluation.verdict), evaluation.check, dumps(evaluation.evidence),
                    dumps(evaluation.feedback), evaluation.n_public, evaluation.n_hidden, log_path,
                    evaluation.wall_s, time.time(),
                ),
            )
            if measurement is not None:
                m = measurement
                c.execute(
                    "INSERT INTO measurements (candidate, median_ms, speedup, roofline_fraction,"
                    " bound, findings_json, raw_json) VALUES (?,?,?,?,?,?,?)",
                    (
                        digest, m.median_ms, m.speedup, m.roofline_fraction, m.bound,
                        dumps(m.findings), dumps(m.raw),
                    ),
                )
                c.executemany(
                    "INSERT INTO speedups (candidate, baseline, value, ci_low, ci_high)"
                    " VALUES (?,?,?,?,?)",
                    [(digest, s.baseline, s.value, s.ci_low, s.ci_high) for s in m.speedups],
                )
            slower = None if slower_at_creation is None else int(slower_at_creation)
            c.execute(
                "UPDATE candidates SET status = 'evaluated', slower_at_creation = ? WHERE hash = ?",
                (slower, digest),
            )
            self.charge("evaluations", 1, digest)
            self.charge("wall_s", wall_s, digest)

    def replace_evaluation(self, digest: str, evaluation: EvaluationRecord) -> None:
        """Replace the evaluation of an evaluated candidate (the end-of-run
        confirmation of a run's best at the full scope), in one transaction;
        no evaluation is charged. A verdict other than ``correct`` also
        removes its measurement and speedups: only correct candidates are timed.
        Raises :class:`StoreError` if the candidate is unknown or not evaluated.
        """
        with self.transaction() as c:
            _require_evaluated(c, digest)
            e = evaluation
            c.execute(
                "UPDATE evaluations SET verdict = ?, check_name = ?, evidence_json = ?, feedback_json = ?,"
                " n_public = ?, n_hidden = ?, wall_s = ? WHERE candidate = ?",
                (str(e.verdict), e.check, dumps(e.evidence), dumps(e.feedback), e.n_public, e.n_hidden,
                 e.wall_s, digest),
            )
            if str(e.verdict) != "correct":
                c.execute("DELETE FROM speedups WHERE candidate = ?", (digest,))
                c.execute("DELETE FROM measurements WHERE candidate = ?", (digest,))

    def replace_measurement(self, digest: str, measurement: MeasurementRecord) -> None:
        """Replace the measurement of an evaluated, correct candidate (a
        re-timing: ``kstrata retime`` or the end-of-run round), in one
        transaction; its evaluation stays and no evaluation is charged.

        Raises
        ------
        StoreError
            If the candidate is unknown or not evaluated.
        """
        with self.transaction() as c:
            _require_evaluated(c, digest)
            m = measurement
            c.execute("DELETE FROM speedups WHERE candidate = ?", (digest,))
            c.execute(
                "INSERT OR REPLACE INTO measurements (candidate, median_ms, speedup, roofline_fraction,"
                " bound, findings_json, raw_json) VALUES (?,?,?,?,?,?,?)",
                (digest, m.median_ms, m.speedup, m.roofline_fraction, m.bound, dumps(m.findings), dumps(m.raw)),
            )
            c.executemany(
                "INSERT INTO speedups (candidate, baseline, value, ci_low, ci_high) VALUES (?,?,?,?,?)",
                [(digest, s.baseline, s.value, s.ci_low, s.ci_high) for s in m.speedups],
            )

    def charge(self, kind: str, amount: float, ref: str | None = None) -> None:
        """Add ``amount`` of ``kind`` (``evaluations``, ``proposer_calls``,
        ``tokens_in``, ``tokens_out``, ``cost_usd``, ``wall_s``, ...) to the ledger."""
        with self.transaction() as c:
            c.execute(
                "INSERT INTO budget_ledger (kind, amount, ref, created) VALUES (?,?,?,?)",
                (kind, float(amount), ref, time.time()),
            )

    # -- reads -------------------------------------------------------------
    def spent(self) -> dict[str, float]:
        """Total spent per ledger kind."""
        rows = self.conn.execute("SELECT kind, SUM(amount) FROM budget_ledger GROUP BY kind")
        return {k: float(v) for k, v in rows}

    def has_candidate(self, digest: str) -> bool:
        return self.conn.execute("SELECT 1 FROM candidates WHERE hash = ?", (digest,)).fetchone() is not None

    def resolve(self, prefix: str) -> str:
        """The full hash of the one candidate whose hash starts with ``prefix``.

        Raises
        ------
        StoreError
            If none or several match (up to five of them named), or ``prefix`` is empty.
        """
        # substr, not LIKE: a prefix's '_' or '%' is a character to match, not a wildcard
        rows = self.conn.execute(
            "SELECT hash FROM candidates WHERE substr(hash, 1, ?) = ? ORDER BY hash LIMIT 6",
            (len(prefix), prefix.lower()),
        ).fetchall()
        if len(rows) != 1:
            if not rows or not prefix:
                raise StoreError(f"no candidate in {self.run_dir} matches {prefix!r}; "
                                 f"`kstrata tree {arg(self.run_dir)}` lists them")
            named = ", ".join(r[0][:12] for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
            raise StoreError(f"several candidates in {self.run_dir} match {prefix!r} ({named}); give more "
                             "of the hash")
        return rows[0][0]

    def sources(self, digest: str) -> dict[str, str]:
        rows = self.conn.execute("SELECT level, text FROM sources WHERE candidate = ?", (digest,))
        return {level: text for level, text in rows}

    def candidates(self, with_sources: bool = False) -> list[CandidateRecord]:
        """Every candidate in creation order, with parents, evaluation and measurement.

        Raises
        ------
        StoreError
            When a row is not what kstrata writes: a field of the wrong kind, a
            parent that is no earlier candidate (:mod:`kstrata.store.row_check`)."""
        c = self.conn
        parents: dict[str, list[str]] = {}
        for child, parent in c.execute(
            "SELECT child, parent FROM candidate_parents ORDER BY child, position"
        ):
            parents.setdefault(child, []).append(parent)
        evals = {r["candidate"]: r for r in c.execute("SELECT * FROM evaluations")}
        meas = {r["candidate"]: r for r in c.execute("SELECT * FROM measurements")}
        speedups: dict[str, list[Speedup]] = {}
        for r in c.execute("SELECT * FROM speedups ORDER BY candidate, baseline"):
            speedups.setdefault(r["candidate"], []).append(
                Speedup(r["baseline"], r["value"], r["ci_low"], r["ci_high"])
            )
        srcs: dict[str, dict[str, str]] = {}
        if with_sources:
            for digest, level, text in c.execute("SELECT candidate, level, text FROM sources"):
                srcs.setdefault(digest, {})[level] = text
        out = []
        for r in c.execute("SELECT * FROM candidates ORDER BY seq"):
            h = r["hash"]
            ev = evals.get(h)
            m = meas.get(h)
            out.append(
                CandidateRecord(
                    hash=h, sources=srcs.get(h, {}), level=r["level"], role=r["role"],
                    proposer=r["proposer"], parents=tuple(parents.get(h, ())),
                    rationale=r["rationale"], router_reason=r["router_reason"],
                    metadata=_loads(r["metadata_json"], f"candidate {h[:12]}'s metadata_json"), backend=r["backend"], seq=r["seq"],
                    depth=r["depth"], status=r["status"],
                    slower_at_creation=None if r["slower_at_creation"] is None
                    else bool(r["slower_at_creation"]),
                    expansion_id=r["expansion_id"], created=r["created"],
                    evaluation=None if ev is None else EvaluationRecord(
                        verdict=ev["verdict"], check=ev["check_name"],
                        evidence=_loads(ev["evidence_json"], f"candidate {h[:12]}'s evidence_json"),
                        feedback=_loads(ev["feedback_json"], f"candidate {h[:12]}'s feedback_json"), n_public=ev["n_public"],
                        n_hidden=ev["n_hidden"], build_log=ev["build_log_path"],
                        wall_s=ev["wall_s"],
                    ),
                    measurement=None if m is None else MeasurementRecord(
                        median_ms=m["median_ms"], speedups=tuple(speedups.get(h, ())),
                        speedup=m["speedup"], roofline_fraction=m["roofline_fraction"],
                        bound=m["bound"], findings=_loads(m["findings_json"], f"candidate {h[:12]}'s findings_json"),
                        raw=_loads(m["raw_json"], f"candidate {h[:12]}'s raw_json"),
                    ),
                )
            )
        row_check.check_candidates(out, self._damaged)
        return out

    def expansions(self) -> list[ExpansionRecord]:
        """Every expansion in order.

        Raises
        ------
        StoreError
            When a row is not what kstrata writes (:mod:`kstrata.store.row_check`)."""
        rows = self.conn.execute("SELECT * FROM expansions ORDER BY id").fetchall()
        out = [ExpansionRecord(**dict(r)) for r in rows]
        hashes = {h for (h,) in self.conn.execute("SELECT hash FROM candidates")}
        row_check.check_expansions(out, hashes, self._damaged)
        return out

    def _damaged(self, why: str) -> StoreError:
        """The error for a run.db whose rows are not what kstrata writes (hand-edited)."""
        return StoreError(f"{self.run_dir / 'run.db'} is damaged: {why}; start a new run with --out, or restore "
                          "the file")

    def proposer_calls(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM proposer_calls ORDER BY id")]


def _require_evaluated(c: Any, digest: str) -> None:
    """Raise :class:`StoreError` unless candidate ``digest`` is evaluated (in transaction ``c``)."""
    row = c.execute("SELECT status FROM candidates WHERE hash = ?", (digest,)).fetchone()
    if row is None or row[0] != "evaluated":
        raise StoreError(f"candidate {digest[:12]} is {row[0] if row else 'unknown'}, not evaluated")
