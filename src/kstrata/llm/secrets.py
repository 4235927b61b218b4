"""API keys: read only from environment variables, and kept out of every log.

A key is looked up by the name of its variable (config ``api_key_env``), never
stored in configuration, a run directory or a cassette. Every key read through
:func:`api_key` is registered, and :func:`install_log_redaction` wraps the
logging record factory so any log message (kstrata's, the SDKs', httpx's) that
contains a registered key has it replaced by ``[REDACTED]``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping

REDACTED = "[REDACTED]"
_secrets: set[str] = set()
_lock = threading.Lock()
_installed = False


class MissingKeyError(LookupError):
    """The environment variable that should hold an API key is unset or empty."""


def api_key(var: str, env: Mapping[str, str] | None = None) -> str:
    """The key in environment variable ``var``, registered for redaction.

    Raises
    ------
    MissingKeyError
        When ``var`` is unset or empty; the message names the variable.
    """
    value = (os.environ if env is None else env).get(var, "")
    if not value.strip():
        raise MissingKeyError(f"environment variable {var} is not set (it should hold the API key)")
    register_secret(value)
    return value


def register_secret(value: str) -> None:
    """Redact ``value`` from log messages and :func:`redact` from now on."""
    if len(value) < 4:  # a tiny "key" would redact ordinary text
        return
    with _lock:
        _secrets.add(value)
    install_log_redaction()


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``[REDACTED]``."""
    for s in _secrets:
        if s in text:
            text = text.replace(s, REDACTED)
    return text


def install_log_redaction() -> None:
    """Redact registered secrets from every log record created from now on
    (idempotent; chains the previous record factory)."""
    global _installed
    with _lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args, **kwargs):  # type: ignore[no-untyped-def]
            record = previous(*args, **kwargs)
            if _secrets:
                try:
                    message = record.getMessage()
                except Exception:  # noqa: BLE001 - leave broken records to logging
                    return record
                clean = redact(message)
                if clean != message:
                    record.msg, record.args = clean, ()
            return record

        logging.setLogRecordFactory(factory)
        _installed = True
