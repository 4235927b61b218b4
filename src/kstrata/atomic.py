"""Atomic file writes: a reader sees the old file or the new one, never half of it."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path


def umask() -> int:
    """This process's umask (e.g. ``0o022``), read from ``/proc/self/status``
    where Linux gives it, else set and restored (:func:`os.umask`)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def write_atomic(path: Path, text: str | bytes, shared: bool = False) -> Path:
    """Write ``text`` (UTF-8; bytes as they are) to ``path`` through a temp
    file and rename. The file is created mode 0600 (:func:`tempfile.mkstemp`),
    or with ``shared`` (a file meant to be handed on, e.g. an HTML report) as
    a plain ``open`` makes it: 0666 less the :func:`umask` (0644 under the
    usual 022).

    Raises
    ------
    OSError
        When the folder cannot be created or written; ``path`` is then untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:  # a folder that takes no new file (/proc, a read-only place): named as the file asked for, not the temp
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise _named(e, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        if shared:
            os.chmod(tmp, 0o666 & ~umask())
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise _named(e, path) from None
    return path


def _named(e: BaseException, path: Path) -> BaseException:
    """``e``, or for an ``OSError`` that names no file or only the temporary
    one (a write's ``ENOSPC``), the same error naming ``path``, the file being
    written: the message a user sees says which file did not fit."""
    if isinstance(e, OSError) and e.errno is not None and (not e.filename or str(e.filename).endswith(".tmp")):
        return OSError(e.errno, e.strerror or str(e), str(path))
    return e


def _write_file(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` (mode 0644, readable by every user; its folder 0755)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o755)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.chmod(path, 0o644)


def write_folder(to: Path, files: Mapping[str, str | bytes]) -> None:
    """Write ``files`` (``{relative path: text or bytes}``) into the folder
    ``to``, all or nothing: into a temporary folder beside ``to`` first, then
    renamed into place (the folder itself when ``to`` is new, else file by
    file), so a full disk or a failed write leaves no half package (newcomer
    nc16: an export of ``task.py`` and ``sources/`` only after an ``OSError``
    28). Other files already in ``to`` stay. Files are mode 0644, folders 0755.

    Raises
    ------
    OSError
        When a file cannot be written, naming the file in ``to`` it was for;
        ``to`` is then as it was.
    """
    to = Path(to)
    to.parent.mkdir(parents=True, exist_ok=True)
    try:
        stage = Path(tempfile.mkdtemp(prefix=f".{to.name}.", suffix=".tmp", dir=to.parent))
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(to)) from None
    try:
        for rel, data in files.items():
            try:
                _write_file(stage / rel, data)
            except OSError as e:  # named as the file it was for, not the staged one
                raise OSError(e.errno, e.strerror, str(to / rel)) from None
        if not to.exists():
            os.chmod(stage, 0o755)
            os.replace(stage, to)
            return
        for rel in files:
            (to / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / rel, to / rel)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
