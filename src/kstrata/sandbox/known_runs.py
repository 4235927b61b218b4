"""The run folders that kstrata processes on this machine have opened,
remembered so that every sandbox hides them, however deep they lie.

:func:`kstrata.sandbox.policy.run_folders` hides the runs inside the folders
bound into a sandbox: those its own process tree opened
(:data:`~kstrata.sandbox.policy.RUN_DIRS_ENV`) and those a walk three levels
deep finds. A run that another kstrata process keeps deeper inside a bound
folder (``--out runs/2026/exp/r1`` in a project on ``PYTHONPATH``) was
readable by every candidate of this one: its ``secret``, from which that
run's hidden tests derive (red-team rt57). Reading a run's secret
(:func:`kstrata.store.secret.run_secret`) now also writes its path into
:func:`registry`, a file in kstrata's cache folder (never bound into a
sandbox: :func:`kstrata.sandbox.policy.private_dirs`), which every sandbox's
start reads.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The registry's file name in kstrata's cache folder.
FILE_NAME = "run-folders.txt"
#: Lines the registry keeps at most: past this it is rewritten with the folders that still exist.
MAX_LINES = 4096
#: Bytes of the registry read at most.
MAX_BYTES = 4 << 20


def registry() -> Path:
    """The registry file: ``<kstrata cache dir>/run-folders.txt`` (``$KSTRATA_CACHE_DIR``)."""
    from kstrata.measure.roofline import cache_dir

    return cache_dir() / FILE_NAME


def remember(run_dir: str) -> None:
    """Add the absolute path ``run_dir`` to the registry (one line, appended);
    never raises (a read-only cache folder keeps nothing)."""
    if "\n" in run_dir or not os.path.isabs(run_dir):
        return
    path = registry()
    try:
        if run_dir in _lines(path):
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, (run_dir + "\n").encode())
        finally:
            os.close(fd)
        lines = _lines(path)
        if len(lines) > MAX_LINES:
            from kstrata.atomic import write_atomic

            kept = [p for p in dict.fromkeys(lines) if os.path.isdir(p)][-MAX_LINES // 2:]
            write_atomic(path, "".join(p + "\n" for p in kept))
    except OSError:
        pass


def remembered() -> list[str]:
    """The registry's folders that exist now (absolute paths); ``[]`` when it cannot be read."""
    return [p for p in dict.fromkeys(_lines(registry())) if os.path.isabs(p) and os.path.isdir(p)]


def _lines(path: Path) -> list[str]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_BYTES)
    return [line for line in data.decode("utf-8", "replace").splitlines() if line]
