"""Atomic file writes: a reader sees the old file or the new one, never half of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temp file and rename.

    Raises
    ------
    OSError
        When the folder cannot be created or written; ``path`` is then untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise named(e, path) from None
    return path


def named(e: BaseException, path: Path) -> BaseException:
    """``e``, or for an ``OSError`` that names no file or only the temporary
    one (a write's ``ENOSPC``), the same error naming ``path``, the file being
    written: the message a user sees says which file did not fit."""
    if isinstance(e, OSError) and e.errno is not None and (not e.filename or str(e.filename).endswith(".tmp")):
        return OSError(e.errno, e.strerror or str(e), str(path))
    return e
