"""The per-run secret that hidden tests (shapes, seeds, distributions) derive from.

It lives in ``RUN_DIR/secret`` (mode 0600), never in the store, the config, a
prompt or feedback, so a resumed run keeps the same hidden tests while agents
never see them. ``$KSTRATA_SECRET`` overrides it (e.g. to share one hidden set
between runs that must be compared).

``RUN_DIR/secret.check`` holds a SHA-256 fingerprint of the secret the run
first used (from either source; the 256-bit secret cannot be recovered from
it), so a run that has judged candidates is never resumed under another
secret: a ``$KSTRATA_SECRET`` set to another value, or a ``secret`` file
copied from another run, would change the hidden set halfway. ``run.db``
holds the same fingerprint (the config's :data:`CONFIG_KEY`, stored when the
run is created, or, for a run made before, at its first use from the
``secret.check`` there), so deleting ``secret.check`` and copying another
run's ``secret`` in is refused too (red team rt71). A judged run with
neither fingerprint is accepted as before, with a warning.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import sqlite3
import sys
from pathlib import Path

from kstrata.atomic import write_atomic

SECRET_FILE = "secret"
CHECK_FILE = "secret.check"
#: the run config's key (in run.db) for the secret's fingerprint
CONFIG_KEY = "secret_check"


def run_secret(run_dir: str | Path) -> str:
    """The run's secret: ``$KSTRATA_SECRET``, else ``RUN_DIR/secret`` (created
    atomically with mode 0600 on first use).

    Raises
    ------
    StoreError
        If ``RUN_DIR/secret`` is missing (or empty) while the run in
        ``RUN_DIR`` has already evaluated candidates: a new secret would
        change its hidden tests halfway, so it is never silently replaced;
        if it is not text (damaged); or if it (or ``$KSTRATA_SECRET``) is not
        the secret the run judged its candidates under (``secret.check``).
    """
    from kstrata.sandbox.policy import keep_out

    keep_out(run_dir)  # no sandbox started from this process tree shows the run folder
    env = os.environ.get("KSTRATA_SECRET")
    if env:
        _check_same(Path(run_dir), env, "$KSTRATA_SECRET")
        return env
    value = _file_secret(Path(run_dir))
    _check_same(Path(run_dir), value, str(Path(run_dir) / SECRET_FILE))
    return value


def _fingerprint(value: str) -> str:
    return hashlib.sha256(b"kstrata-secret-check\0" + value.encode()).hexdigest()


def stored_fingerprint(run_dir: Path) -> str | None:
    """The fingerprint ``secret.check`` holds (None: absent or unreadable), for
    :meth:`kstrata.store.run_store.RunStore.create` to store in run.db."""
    try:
        return (run_dir / CHECK_FILE).read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def _check_same(run_dir: Path, value: str, source: str) -> None:
    """Compare ``value`` with the run's fingerprints, ``secret.check`` and
    run.db's (each written when absent, or when the run has judged nothing yet).

    Raises
    ------
    StoreError
        When the run has judged candidates under a secret with another
        fingerprint than either.
    """
    from kstrata.store.run_store import RunStore, StoreError

    check = run_dir / CHECK_FILE
    want = _fingerprint(value)
    have = stored_fingerprint(run_dir)
    in_db, judged = None, False
    if RunStore.exists(run_dir):
        with RunStore.open(run_dir) as store:
            judged = store.spent().get("evaluations", 0.0) > 0
            in_db = store.config.get(CONFIG_KEY)
    if have == want and in_db == want:
        return
    if judged and ((have and have != want) or (in_db and in_db != want)):
        where = " and ".join(str(w) for w, fp in ((check, have), (run_dir / "run.db", in_db)) if fp and fp != want)
        raise StoreError(
            f"{source} is not the secret this run's candidates were verified with (its fingerprint differs "
            f"from the one in {where}); resuming would change the hidden tests halfway. Restore "
            f"{run_dir / SECRET_FILE} from a copy of this run, unset $KSTRATA_SECRET or set it to the run's value, "
            "or start a new run with --out")
    if judged and not have and not in_db:
        print(f"warning: {run_dir} records no fingerprint of its secret (a run from before secret.check), so "
              f"whether {source} is the secret its candidates were verified with cannot be checked; it is taken "
              "as the run's from now on", file=sys.stderr)
    if run_dir.is_dir() and have != want:
        try:
            write_atomic(check, want + "\n")
        except OSError:  # a read-only copy of a run: nothing to record
            pass
    if in_db != want and RunStore.exists(run_dir):
        try:  # one transaction (RunStore.update_config): run.db's fingerprint and config.json, or neither
            with RunStore.open(run_dir) as store:
                store.update_config({CONFIG_KEY: want})
        except (StoreError, OSError, sqlite3.Error):  # a read-only copy of a run: nothing to record
            pass


def _file_secret(run_dir: Path) -> str:
    """``RUN_DIR/secret``, created when absent (see :func:`run_secret`)."""
    path = run_dir / SECRET_FILE
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
    value = secrets.token_hex(32)
    write_atomic(path, value + "\n")  # mode 0600
    return value


def _judged(run_dir: Path) -> bool:
    """Whether the run in ``run_dir`` (if any) has evaluated a candidate."""
    from kstrata.store.run_store import RunStore

    if not RunStore.exists(run_dir):
        return False
    with RunStore.open(run_dir) as store:
        return store.spent().get("evaluations", 0.0) > 0


def _refuse_new_secret_for_judged_run(run_dir: Path) -> None:
    from kstrata.store.run_store import StoreError

    if _judged(run_dir):
        raise StoreError(
            f"{run_dir / SECRET_FILE} is missing or empty, but this run's candidates were verified "
            "against hidden tests derived from it; a new secret would change the hidden set halfway. "
            "Restore the file (or set $KSTRATA_SECRET to its value), or start a new run with --out"
        )
