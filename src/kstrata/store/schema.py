"""SQLite schema of a run store (``RUN_DIR/run.db``).

One database per run. The tables, in the order rows are born:

``run``            one row: creation time, kstrata version, seed, resolved config (JSON)
``tasks``          the task(s) of the run: name, sha256 digest of the file, path, metadata
``expansions``     one row per proposer invocation: which node, at which level, why
                   (policy and router reasons), kind (``policy`` or ``lookahead``), error
``candidates``     content-addressed versions (sha256 over normalized sources + backend
                   + task digest); ``status`` is ``pending`` until its evaluation row
                   is committed in the same transaction that sets ``evaluated``
``candidate_parents``  lineage edges (a candidate may have several parents)
``sources``        source text per (candidate, level); the files under
                   ``candidates/<hash>/`` are copies for people and reports
``evaluations``    at most one per candidate (UNIQUE): verdict, check, evidence, feedback
``measurements``   at most one per candidate: key numbers + the full JSON
``speedups``       speedup per (candidate, baseline) with its confidence interval
``proposer_calls`` prompt, response, tokens, cost, latency, provider, model, error
``budget_ledger``  what was spent on what (kind, amount, reference)

Bump :data:`SCHEMA_VERSION` and add a step to ``MIGRATIONS`` when it changes.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA busy_timeout=10000",
)
#: Set on a run opened for reading only (its folder is not writable): no journal mode change, no writes.
READONLY_PRAGMAS = ("PRAGMA query_only=ON", "PRAGMA busy_timeout=10000")

DDL = """
CREATE TABLE schema_version (version INTEGER NOT NULL);

CREATE TABLE run (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    created REAL NOT NULL,
    kstrata_version TEXT NOT NULL,
    seed INTEGER NOT NULL,
    config_json TEXT NOT NULL
);

CREATE TABLE tasks (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    path TEXT,
    meta_json TEXT,
    UNIQUE (name, digest)
);

CREATE TABLE expansions (
    id INTEGER PRIMARY KEY,
    candidate TEXT NOT NULL REFERENCES candidates(hash),
    level TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('policy', 'lookahead')),
    anchor TEXT REFERENCES candidates(hash),
    policy_reason TEXT NOT NULL DEFAULT '',
    router_reason TEXT NOT NULL DEFAULT '',
    proposer TEXT NOT NULL,
    n_proposals INTEGER NOT NULL DEFAULT 0,
    n_new INTEGER NOT NULL DEFAULT 0,
    n_duplicate INTEGER NOT NULL DEFAULT 0,
    n_malformed INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    wall_s REAL NOT NULL DEFAULT 0,
    created REAL NOT NULL
);

CREATE TABLE candidates (
    hash TEXT PRIMARY KEY,
    seq INTEGER NOT NULL UNIQUE,
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    backend TEXT NOT NULL,
    level TEXT,
    role TEXT NOT NULL,
    proposer TEXT NOT NULL,
    rationale TEXT NOT NULL DEFAULT '',
    router_reason TEXT NOT NULL DEFAULT '',
    metadata_json TEXT NOT NULL DEFAULT '{}',
    expansion_id INTEGER REFERENCES expansions(id),
    depth INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'evaluated')),
    slower_at_creation INTEGER,
    created REAL NOT NULL
);

CREATE TABLE candidate_parents (
    child TEXT NOT NULL REFERENCES candidates(hash),
    parent TEXT NOT NULL REFERENCES candidates(hash),
    position INTEGER NOT NULL,
    PRIMARY KEY (child, parent)
);
CREATE INDEX candidate_parents_parent ON candidate_parents(parent);

CREATE TABLE sources (
    candidate TEXT NOT NULL REFERENCES candidates(hash),
    level TEXT NOT NULL,
    text TEXT NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (candidate, level)
);

CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    candidate TEXT NOT NULL UNIQUE REFERENCES candidates(hash),
    verdict TEXT NOT NULL,
    check_name TEXT,
    evidence_json TEXT NOT NULL DEFAULT 'null',
    feedback_json TEXT NOT NULL DEFAULT 'null',
    n_public INTEGER,
    n_hidden INTEGER,
    build_log_path TEXT,
    wall_s REAL,
    created REAL NOT NULL
);

CREATE TABLE measurements (
    candidate TEXT PRIMARY KEY REFERENCES candidates(hash),
    median_ms REAL,
    speedup REAL,
    roofline_fraction REAL,
    bound TEXT,
    findings_json TEXT NOT NULL DEFAULT '[]',
    raw_json TEXT NOT NULL DEFAULT 'null'
);

CREATE TABLE speedups (
    candidate TEXT NOT NULL REFERENCES candidates(hash),
    baseline TEXT NOT NULL,
    value REAL NOT NULL,
    ci_low REAL,
    ci_high REAL,
    PRIMARY KEY (candidate, baseline)
);

CREATE TABLE proposer_calls (
    id INTEGER PRIMARY KEY,
    expansion_id INTEGER REFERENCES expansions(id),
    provider TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    prompt TEXT NOT NULL DEFAULT '',
    response TEXT NOT NULL DEFAULT '',
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL DEFAULT 0,
    error TEXT,
    created REAL NOT NULL
);

CREATE TABLE budget_ledger (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    amount REAL NOT NULL,
    ref TEXT,
    created REAL NOT NULL
);
CREATE INDEX budget_ledger_kind ON budget_ledger(kind);
"""

#: version -> SQL that upgrades a database from ``version - 1``.
MIGRATIONS: dict[int, str] = {}
