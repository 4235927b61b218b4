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
    atomically with mode 0600 on first use).

    Raises
    ------
    StoreError
        If ``RUN_DIR/secret`` is missing (or empty) while the run in
        ``RUN_DIR`` has already evaluated candidates: a new secret would
        change its hidden tests halfway, so it is never silently replaced;
        or if it is not text (damaged).
    """
    env = os.environ.get("KSTRATA_SECRET")
    if env:
        return env
    path = Path(run_dir) / SECRET_FILE
    if path.is_file():
        try:
            value = path.read_text(encoding="ascii").strip()
        except (UnicodeDecodeError, OSError) as e:
            from kstrata.store.run_store import StoreError

            raise StoreError(f"{path} is not a kstrata secret ({type(e).__name__}: not the hex text kstrata "
                             "writes); restore it from a copy of the run (or set $KSTRATA_SECRET to its "
                             "value), or start a new run with --out") from None
        if value:
            return value
    _refuse_new_secret_for_judged_run(Path(run_dir))
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_hex(32)
    tmp = path.with_name(f".{SECRET_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(value + "\n")
    os.replace(tmp, path)
    return value


def _refuse_new_secret_for_judged_run(run_dir: Path) -> None:
    from kstrata.store.run_store import RunStore, StoreError

    if not RunStore.exists(run_dir):
        return
    with RunStore.open(run_dir) as store:
        judged = store.spent().get("evaluations", 0.0) > 0
    if judged:
        raise StoreError(
            f"{run_dir / SECRET_FILE} is missing or empty, but this run's candidates were verified "
            "against hidden tests derived from it; a new secret would change the hidden set halfway. "
            "Restore the file (or set $KSTRATA_SECRET to its value), or start a new run with --out"
        )
