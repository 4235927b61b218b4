"""The per-run secret that hidden tests (shapes, seeds, distributions) derive from.

It lives in ``RUN_DIR/secret`` (mode 0600), never in the store, the config, a
prompt or feedback, so a resumed run keeps the same hidden tests while agents
never see them. ``$KSTRATA_SECRET`` overrides it (e.g. to share one hidden set
between runs that must be compared).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

SECRET_FILE = "secret"


def run_secret(run_dir: str | Path) -> str:
    """The run's secret: ``$KSTRATA_SECRET``, else ``RUN_DIR/secret`` (created
    atomically with mode 0600 on first use)."""
    env = os.environ.get("KSTRATA_SECRET")
    if env:
        return env
    path = Path(run_dir) / SECRET_FILE
    if path.is_file():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_hex(32)
    tmp = path.with_name(f".{SECRET_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(value + "\n")
    os.replace(tmp, path)
    return value
