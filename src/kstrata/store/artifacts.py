"""Files of a run directory, written atomically (temp file in the same folder,
fsync, ``os.replace``), so a reader never sees half a file."""

from __future__ import annotations

import difflib
from pathlib import Path

from kstrata.atomic import write_atomic  # noqa: F401 - re-exported for the store

#: File extension per level when the backend names none.
DEFAULT_EXTENSIONS = {"graph": "py", "schedule": "py", "source": "txt"}




def candidate_dir(run_dir: Path, digest: str) -> Path:
    """``RUN_DIR/candidates/<hash>``."""
    return Path(run_dir) / "candidates" / digest


def source_name(level: str, extensions: dict[str, str]) -> str:
    """``<level>.<ext>``, the extension from ``extensions`` or :data:`DEFAULT_EXTENSIONS`."""
    return f"{level}.{extensions.get(level) or DEFAULT_EXTENSIONS.get(level, 'txt')}"


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
