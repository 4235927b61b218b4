"""Agent memory in SQLite: long-term skills across runs, short-term attempts per run.

Long-term (table ``skills``): a transformation that worked — the level's text
before and after (and their unified diff), task name and category, backend,
hardware, level, role, a one-line description, the speedup over the parent
(``after / before``, both against the run's primary baseline) and a search
text (category + the reference's operator names). :meth:`MemoryStore.similar`
retrieves skills for a new prompt by token-set Jaccard similarity of the search
texts (Jaccard 1901; no network, no model), boosted for the same category,
backend family and level.

Short-term (table ``attempts``): what the agents of one run tried from which
candidate, and how it ended (``proposed``, ``refused``, ``no_answer``, ``parse_error``),
keyed by a run key that a resumed run derives again; rendered into the prompt's
``history`` so agents do not repeat themselves.

The database is ``$KSTRATA_MEMORY_DB`` if set, else ``~/.cache/kstrata/memory.db``.
Every write is one transaction; :meth:`MemoryStore.import_jsonl` validates every
line before it writes any.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
LEVELS = ("graph", "schedule", "source")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS skills (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    digest TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL,
    task TEXT NOT NULL DEFAULT '',
    category TEXT NOT NULL DEFAULT '',
    backend TEXT NOT NULL,
    hardware TEXT NOT NULL DEFAULT '',
    level TEXT NOT NULL CHECK (level IN ('graph', 'schedule', 'source')),
    role TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    before TEXT NOT NULL DEFAULT '',
    after TEXT NOT NULL,
    diff TEXT NOT NULL DEFAULT '',
    speedup REAL NOT NULL,
    search_text TEXT NOT NULL DEFAULT '',
    run TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS skills_category ON skills (category, backend);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_key TEXT NOT NULL,
    parent TEXT NOT NULL,
    child TEXT NOT NULL DEFAULT '',
    level TEXT NOT NULL,
    role TEXT NOT NULL,
    outcome TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    before TEXT NOT NULL DEFAULT '',
    after TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_run ON attempts (run_key, parent);
CREATE TABLE IF NOT EXISTS lessons (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run TEXT NOT NULL,
    child TEXT NOT NULL,
    created TEXT NOT NULL,
    task TEXT NOT NULL,
    backend TEXT NOT NULL,
    level TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL DEFAULT '',
    outcome TEXT NOT NULL,
    UNIQUE (run, child)
);
CREATE INDEX IF NOT EXISTS lessons_task ON lessons (task, backend, level);
"""

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STOP = frozenset("self x y def return import from torch nn class model forward none true false in for "
                  "the a of and to is int float".split())


class MemoryFileError(ValueError):
    """A memory file or import line that is not valid (the message says which and why)."""


def default_path() -> Path:
    """``$KSTRATA_MEMORY_DB`` or ``~/.cache/kstrata/memory.db``."""
    env = os.environ.get("KSTRATA_MEMORY_DB")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "kstrata" / "memory.db"


def tokens(text: str) -> frozenset[str]:
    """Lower-case identifier tokens of ``text`` (also split at ``_`` and ``.``),
    without common Python/PyTorch boilerplate words."""
    out: set[str] = set()
    for t in _TOKEN.findall(text):
        low = t.lower()
        out.add(low)
        out.update(p for p in low.split("_") if len(p) > 1)
    return frozenset(out - _STOP)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """``|a ∩ b| / |a ∪ b|`` (0 for two empty sets)."""
    return len(a & b) / len(a | b) if a or b else 0.0


def op_text(task: Any) -> str:
    """The search text of a task: its category, name and the identifiers of its
    reference ``forward`` (e.g. ``matmul relu mean``), public data only."""
    meta = getattr(task, "meta", None)
    src = getattr(task, "source", "") or ""
    m = re.search(r"def forward\(.*?(?=\ndef |\nclass |\Z)", src, flags=re.S)
    body = m.group(0) if m else ""
    return " ".join([getattr(meta, "category", "") or "", getattr(task, "name", ""), body])


def unified_diff(before: str, after: str) -> str:
    """A unified diff of two texts (``difflib``)."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        "before", "after", n=2))


@dataclass(frozen=True)
class Skill:
    """One transformation that worked.

    Attributes
    ----------
    backend, level:
        Where it applies (``level`` in graph/schedule/source).
    after:
        The level's text after the change (required).
    speedup:
        After over before, against the run's primary baseline (> 1 is faster).
    before, diff:
        The text before, and the unified diff (filled from both when empty).
    task, category, hardware, role, description, search_text, run:
        Context; ``search_text`` defaults to the category.
    id, created:
        Set by the store.
    """

    backend: str
    level: str
    after: str
    speedup: float
    before: str = ""
    diff: str = ""
    task: str = ""
    category: str = ""
    hardware: str = ""
    role: str = ""
    description: str = ""
    search_text: str = ""
    run: str = ""
    id: int | None = None
    created: str = ""

    @property
    def digest(self) -> str:
        """sha256 over backend, level, before and after (duplicates are kept once)."""
        return hashlib.sha256(json.dumps([self.backend, self.level, self.before, self.after]).encode()).hexdigest()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Skill:
        """Validate and build from an exported line.

        Raises
        ------
        MemoryFileError
            For unknown or missing keys, a wrong type, an unknown level or a
            non-positive speedup.
        """
        if not isinstance(data, Mapping):
            raise MemoryFileError("a skill must be a JSON object")
        known = {f.name for f in fields(cls)}
        extra = set(data) - known
        if extra:
            raise MemoryFileError(f"unknown key(s) {sorted(extra)}; known: {sorted(known)}")
        for key in ("backend", "level", "after", "speedup"):
            if key not in data:
                raise MemoryFileError(f"missing key {key!r}")
        for key, value in data.items():
            if key in ("id",):
                continue
            want = float if key == "speedup" else str
            if key == "speedup" and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, want):
                raise MemoryFileError(f"{key} must be {want.__name__}, not {type(value).__name__}")
        if data["level"] not in LEVELS:
            raise MemoryFileError(f"level {data['level']!r} not one of {LEVELS}")
        if not data["speedup"] > 0:
            raise MemoryFileError(f"speedup must be > 0, got {data['speedup']}")
        if not str(data["after"]).strip():
            raise MemoryFileError("after must not be empty")
        return cls(**{**dict(data), "speedup": float(data["speedup"]), "id": None})

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Attempt:
    """One short-term memory row: what was tried from ``parent`` at ``level``."""

    parent: str
    level: str
    role: str
    outcome: str
    summary: str = ""
    reason: str = ""
    child: str = ""
    before: str = ""
    after: str = ""

    def line(self) -> str:
        """One prompt history line."""
        why = f" ({self.reason[:200]})" if self.reason else ""
        return f"[{self.level}, {self.role}] {self.summary[:160] or 'an edit'} -> {self.outcome}{why}"


@dataclass
class MemoryStore:
    """The memory database (see the module docstring).

    Parameters
    ----------
    path:
        The SQLite file (created with its folder); ``":memory:"`` for a
        throw-away store.
    """

    path: Path | str = field(default_factory=default_path)

    def __post_init__(self) -> None:
        if str(self.path) != ":memory:":
            self.path = Path(self.path).expanduser()
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA busy_timeout = 10000")
        with self.transaction() as c:
            for stmt in filter(str.strip, SCHEMA.split(";")):
                c.execute(stmt)
            c.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        version = int(self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise MemoryFileError(f"{self.path} has memory schema {version}; this kstrata reads <= {SCHEMA_VERSION}")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any exception)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- long-term -----------------------------------------------------------
    def _insert(self, c: sqlite3.Connection, skill: Skill) -> int | None:
        diff = skill.diff or unified_diff(skill.before, skill.after)
        row = {**skill.to_json(), "diff": diff, "search_text": skill.search_text or skill.category,
               "created": skill.created or datetime.now(timezone.utc).isoformat(timespec="seconds")}
        row.pop("id")
        row["digest"] = skill.digest
        cur = c.execute(
            f"INSERT OR IGNORE INTO skills ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()),
        )
        return cur.lastrowid if cur.rowcount else None

    def add_skill(self, skill: Skill) -> int | None:
        """Store ``skill``; its id, or ``None`` if the same transformation is stored."""
        with self.transaction() as c:
            return self._insert(c, skill)

    def skills(self, category: str | None = None, backend: str | None = None) -> list[Skill]:
        """Stored skills (optionally of one category/backend), best speedup first."""
        q, args = "SELECT * FROM skills WHERE 1=1", []
        if category:
            q, args = q + " AND category = ?", [*args, category]
        if backend:
            q, args = q + " AND backend = ?", [*args, backend]
        rows = self.conn.execute(q + " ORDER BY speedup DESC, id", args).fetchall()
        return [self._skill(r) for r in rows]

    def skill(self, skill_id: int) -> Skill:
        """One skill by id.

        Raises
        ------
        KeyError
            When no skill has that id.
        """
        row = self.conn.execute("SELECT * FROM skills WHERE id = ?", (skill_id,)).fetchone()
        if row is None:
            raise KeyError(f"no skill with id {skill_id} in {self.path}")
        return self._skill(row)

    def _skill(self, row: sqlite3.Row) -> Skill:
        d = dict(row)
        d.pop("digest", None)
        return self._checked(Skill(**d), f"skill {d.get('id')}")

    def _checked(self, record: Any, what: str) -> Any:
        """``record`` (a :class:`Skill` or :class:`Attempt` read back), once each
        field holds the kind it declares: the database is a file anyone could
        have edited, and a speedup of ``'abc'`` or a description stored as
        bytes ended ``kstrata memory list``/``show``/``export`` in a traceback
        (red team rt62).

        Raises
        ------
        MemoryFileError
            Naming the database, the row and the field."""
        from kstrata.store.row_check import check_fields

        check_fields(record, what, lambda why: MemoryFileError(
            f"{self.path} is damaged: {why}; restore it, or move it away to start an empty memory"))
        return record

    def similar(self, query: str, *, category: str = "", backend: str = "", level: str | None = None,
                k: int = 3, min_score: float = 0.05, same_level: bool = False, same_backend: bool = False,
                exclude_run: str = "") -> list[tuple[float, Skill]]:
        """The ``k`` skills most similar to ``query``.

        Score: Jaccard similarity of the token sets of ``query`` and the skill's
        search text, plus 0.3 for the same category, 0.1 for the same backend
        family (``tvm``, ``triton``, ...) and 0.1 for the same ``level``;
        skills scoring below ``min_score`` are left out. Ties: higher speedup.
        ``same_level``/``same_backend`` keep only skills filed under ``level``
        / ``backend`` (a prompt shows only skills it can apply: no schedule
        skills in a source prompt); ``exclude_run`` leaves out the skills a run
        learned itself (they are its own history, not memory of earlier runs).
        """
        q = tokens(query)
        family = backend.split("-")[0]
        scored = []
        for s in self.skills():
            if (same_level and s.level != level) or (same_backend and s.backend != backend) \
                    or (exclude_run and s.run == exclude_run):
                continue
            score = jaccard(q, tokens(s.search_text))
            score += 0.3 * bool(category and s.category == category)
            score += 0.1 * bool(family and s.backend.split("-")[0] == family)
            score += 0.1 * bool(level and s.level == level)
            if score >= min_score:
                scored.append((round(score, 6), s))
        scored.sort(key=lambda x: (-x[0], -x[1].speedup, x[1].id or 0))
        return scored[:k]

    def export_jsonl(self, out: Any) -> int:
        """Write every skill as one JSON line to the text stream ``out``; the count."""
        n = 0
        for s in self.skills():
            out.write(json.dumps(s.to_json(), sort_keys=True) + "\n")
            n += 1
        return n

    def import_jsonl(self, lines: Iterable[str]) -> tuple[int, int]:
        """Import exported skills: all or nothing.

        Returns
        -------
        (added, already_present)

        Raises
        ------
        MemoryFileError
            Naming the first bad line (not JSON, or not a valid skill); nothing
            is written then.
        """
        skills = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise MemoryFileError(f"line {n}: not JSON ({e.msg})") from None
            except (ValueError, RecursionError) as e:  # nested too deep, an int of 5000 digits (red team rt51)
                raise MemoryFileError(f"line {n}: not usable JSON ({type(e).__name__})") from None
            try:
                skills.append(Skill.from_json(data))
            except MemoryFileError as e:
                raise MemoryFileError(f"line {n}: {e}") from None
        added = 0
        with self.transaction() as c:
            for s in skills:
                added += self._insert(c, s) is not None
        return added, len(skills) - added

    # -- short-term ------------------------------------------------------------
    def add_attempt(self, run_key: str, attempt: Attempt) -> None:
        """Record one attempt of the run ``run_key``."""
        row = {**asdict(attempt), "run_key": run_key,
               "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        with self.transaction() as c:
            c.execute(f"INSERT INTO attempts ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                      tuple(row.values()))

    # -- lessons: failed proposals, kept across runs ------------------------------
    def add_lesson(self, run: str, child: str, *, task: str, backend: str, level: str, role: str,
                   summary: str, outcome: str) -> bool:
        """Record that the proposal ``child`` of run ``run`` failed (``outcome``:
        the verdict and where it failed, :func:`kstrata.agents.run_history.outcome`);
        once per run and child. Returns whether a row was added."""
        row = {"run": run, "child": child, "task": task, "backend": backend, "level": level, "role": role,
               "summary": summary[:400], "outcome": outcome[:600],
               "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        with self.transaction() as c:
            cur = c.execute(f"INSERT OR IGNORE INTO lessons ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                            tuple(row.values()))
        return cur.rowcount == 1

    def lessons(self, task: str, backend: str, level: str, *, exclude_run: str = "",
                limit: int = 4) -> list[dict[str, str]]:
        """The failed proposals of earlier runs on ``task`` at ``level`` on
        ``backend``, latest first (not those of ``exclude_run``): ``{"summary",
        "outcome", "role", "created"}`` each. A second run on a task repeats
        the first run's mistakes unless its prompts say what failed (queue
        round rt58: only skills with trusted speedups crossed runs, and a
        contended machine stores none)."""
        rows = self.conn.execute(
            "SELECT summary, outcome, role, created FROM lessons WHERE task = ? AND backend = ? AND level = ? "
            "AND run != ? ORDER BY id DESC LIMIT ?", (task, backend, level, exclude_run, int(limit)))
        return [{k: r[k] for k in ("summary", "outcome", "role", "created")} for r in rows]

    def attempt_counts(self) -> tuple[int, int]:
        """``(proposals, runs)``: how many proposals were recorded, over how many runs."""
        row = self.conn.execute("SELECT COUNT(*), COUNT(DISTINCT run_key) FROM attempts "
                                "WHERE outcome = 'proposed'").fetchone()
        return int(row[0]), int(row[1])

    def attempts(self, run_key: str, parent: str | None = None, outcome: str | None = None) -> list[Attempt]:
        """Attempts of ``run_key`` in order (optionally from one parent / with one outcome)."""
        q, args = "SELECT * FROM attempts WHERE run_key = ?", [run_key]
        if parent is not None:
            q, args = q + " AND parent = ?", [*args, parent]
        if outcome is not None:
            q, args = q + " AND outcome = ?", [*args, outcome]
        names = {f.name for f in fields(Attempt)}
        return [self._checked(Attempt(**{k: r[k] for k in names}), f"attempt {r['id']}")
                for r in self.conn.execute(q + " ORDER BY id", args)]
