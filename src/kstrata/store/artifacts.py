"""Files of a run directory, written atomically (temp file in the same folder,
fsync, ``os.replace``), so a reader never sees half a file."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from kstrata.atomic import write_atomic  # noqa: F401 - re-exported for the store

#: File extension per level when the backend names none.
DEFAULT_EXTENSIONS = {"graph": "py", "schedule": "py", "source": "txt"}


def backend_extensions(backend: object) -> dict[str, str]:
    """``{level: file extension}`` a backend's levels are stored under
    (:attr:`kstrata.backends.base.Backend.source_extensions`); ``{}`` for an object
    without one (a test's stand-in backend), whose levels then take
    :data:`DEFAULT_EXTENSIONS`."""
    return dict(getattr(backend, "source_extensions", {}) or {})


#: what a level name, a file extension and a candidate hash may be when one
#: becomes part of a path: one plain name (no separator, no ``..``, no
#: leading dot). They come from places kstrata does not control (an edited
#: run.db, a ``candidate.json``, an imported directory), and a level named
#: ``../../x`` would otherwise write ``RUN/best/../../x.txt``.
_LEVEL = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_EXT = re.compile(r"[A-Za-z0-9]{1,16}")
_DIGEST = re.compile(r"[A-Za-z0-9_-]{1,128}")


class UnsafeName(ValueError):
    """A level name, extension, hash or file name that is not one plain name
    (it holds a path separator, ``..``, a leading dot, a control character or
    is empty or longer than the limits of :data:`_LEVEL`/:data:`_DIGEST`)."""


def safe_level(level: object) -> str:
    """``level`` when it is a plain level name (``[A-Za-z_][A-Za-z0-9_-]*``,
    at most 64 characters).

    Raises
    ------
    UnsafeName
        Otherwise (``"../x"``, ``"a/b"``, ``""``, not a string)."""
    if not isinstance(level, str) or not _LEVEL.fullmatch(level):
        raise UnsafeName(f"{level!r} is not a level name (letters, digits, '_' or '-'; no path)")
    return level


def safe_file_name(name: object) -> str:
    """``name`` when it names a file directly inside a folder: no ``/`` or
    ``\\``, not ``.``/``..``, no NUL or other control character.

    Raises
    ------
    UnsafeName
        Otherwise (``"../../etc/passwd"``, ``"/etc/passwd"``, ``"a/b.py"``)."""
    if (not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\\" in name
            or any(ord(c) < 32 or ord(c) == 127 for c in name) or len(name) > 255):
        raise UnsafeName(f"{name!r} is not a file name inside the folder (no path separators or '..')")
    return name


def write_in_run(run_dir: Path, path: Path, text: str | bytes) -> Path:
    """:func:`write_atomic` of ``path``, a file inside the run directory
    ``run_dir``, after every folder between them that is a symbolic link was
    removed (the write then makes it a real folder). A run directory copied
    from elsewhere with ``best -> /etc`` (or ``candidates/<hash> -> ~/.ssh``)
    had ``kstrata optimize --resume`` write the best candidate's
    ``source.py`` into ``/etc`` (red-team rt59); a run's folders are
    kstrata's own, and what a link there held is in ``run.db``. The file
    itself is replaced by a rename, which never writes through a link.

    Raises
    ------
    UnsafeName
        When ``path`` is not inside ``run_dir``.
    OSError
        As :func:`write_atomic`.
    """
    run_dir, path = Path(run_dir), Path(path)
    try:
        parts = path.parent.relative_to(run_dir).parts
    except ValueError:
        raise UnsafeName(f"{path} is not inside the run directory {run_dir}") from None
    if ".." in parts:
        raise UnsafeName(f"{path} is not inside the run directory {run_dir}")
    folder = run_dir
    for part in parts:
        folder = folder / part
        if folder.is_symlink():
            folder.unlink()
    return write_atomic(path, text)


def candidate_dir(run_dir: Path, digest: str) -> Path:
    """``RUN_DIR/candidates/<hash>``.

    Raises
    ------
    UnsafeName
        If ``digest`` is not one plain name (``[A-Za-z0-9_-]``, 1-128 characters)."""
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise UnsafeName(f"{digest!r} is not a candidate hash")
    return Path(run_dir) / "candidates" / digest


def source_name(level: str, extensions: dict[str, str]) -> str:
    """``<level>.<ext>``, the extension from ``extensions`` or :data:`DEFAULT_EXTENSIONS`.

    Raises
    ------
    UnsafeName
        If ``level`` is not a plain level name (:func:`safe_level`) or the
        extension not plain letters and digits: the name becomes a path."""
    ext = extensions.get(level) or DEFAULT_EXTENSIONS.get(level, "txt")
    if not isinstance(ext, str) or not _EXT.fullmatch(ext):
        raise UnsafeName(f"{ext!r} is not a file extension")
    return f"{safe_level(level)}.{ext}"


def source_path(run_dir: Path, digest: str, level: str, extensions: dict[str, str]) -> Path:
    """``RUN_DIR/candidates/<hash>/<level>.<ext>``."""
    return candidate_dir(run_dir, digest) / source_name(level, extensions)


def unified_diff(parent: dict[str, str], child: dict[str, str]) -> str:
    """``difflib`` unified diff of every level, parent → child (empty if equal)."""
    parts = []
    for level in sorted(set(parent) | set(child)):
        a, b = parent.get(level, ""), child.get(level, "")
        if a != b:
            parts.extend(
                difflib.unified_diff(
                    a.splitlines(keepends=True),
                    b.splitlines(keepends=True),
                    fromfile=f"parent/{level}",
                    tofile=f"child/{level}",
                )
            )
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts)
