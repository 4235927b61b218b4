"""The per-run secret that hidden tests (shapes, seeds, distributions) derive from.

It lives in ``RUN_DIR/secret`` (mode 0600), never in the store, the config, a
prompt or feedback, so a resumed run keeps the same hidden tests while agents
never see them. ``$KSTRATA_SECRET`` overrides it (e.g. to share one hidden set
between runs that must be compared).

``RUN_DIR/secret.check`` holds a SHA-256 fingerprint of the secret the run
first used (from either source; the 256-bit secret cannot be recovered from
it), so a run that has judged candidates is never resumed under another
secret: a ``$KSTRATA_SECRET`` set to another value, or a ``secret`` file
copied from another run, would change the hidden set halfway.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

from kstrata.atomic import write_atomic

SECRET_FILE = "secret"
CHECK_FILE = "secret.check"


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


def _check_same(run_dir: Path, value: str, source: str) -> None:
    """Compare ``value`` with the run's ``secret.check`` (written when absent,
    or when the run has judged nothing yet).

    Raises
    ------
    StoreError
        When the run has judged candidates under a secret with another fingerprint.
    """
    check = run_dir / CHECK_FILE
    want = _fingerprint(value)
    try:
        have = check.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        have = None
    if have == want:
        return
    if have and _judged(run_dir):
        from kstrata.store.run_store import StoreError

        raise StoreError(
            f"{source} is not the secret this run's candidates were verified with (its fingerprint differs "
            f"from {check}); resuming would change the hidden tests halfway. Restore {run_dir / SECRET_FILE} "
            "from a copy of the run, unset $KSTRATA_SECRET or set it to the run's value, or start a new run "
            "with --out")
    if run_dir.is_dir():
        try:
            write_atomic(check, want + "\n")
        except OSError:  # a read-only copy of a run: nothing to record
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
