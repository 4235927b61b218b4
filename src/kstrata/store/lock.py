"""One writer per run folder: an advisory lock on ``RUN/run.lock``.

``kstrata optimize`` (new or ``--resume``) and ``kstrata retime`` hold it
while they write a run; a second one on the same folder is refused, naming
the process that holds it (newcomer nc16: two ``--resume`` of one run both
ran on one run.db). The lock is ``flock(2)`` on an open file: the kernel
drops it when the holder exits or is killed, so a lock left by a killed run
never blocks the next. Reading commands take no lock.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kstrata.store.run_store import StoreError, not_writable

LOCK_NAME = "run.lock"

#: Locks this process holds: resolved run folder -> [file descriptor, depth]. Re-entrant, since the
#: CLI takes a run's lock before the search (which takes it again) and ``flock`` locks per open file.
_HELD: dict[Path, list[int]] = {}


def holder(run_dir: str | Path) -> str:
    """What ``RUN/run.lock`` says of its holder (``"PID 1234 (kstrata optimize)"``), or ``"another process"``."""
    try:
        pid, _, what = (Path(run_dir) / LOCK_NAME).read_text().strip().partition(" ")
    except (OSError, UnicodeDecodeError):
        return "another process"
    return f"PID {pid}" + (f" ({what})" if what else "") if pid.isdigit() else "another process"


@contextmanager
def run_lock(run_dir: str | Path, command: str) -> Iterator[None]:
    """Hold the write lock of the run folder ``run_dir`` (which must exist)
    while the block runs; ``command`` (e.g. ``"kstrata retime"``) is written
    beside this process's PID for a refused second writer to name.

    Raises
    ------
    StoreError
        ``"RUN is in use by PID N (kstrata optimize); ..."`` when another
        process holds it; ``"RUN is not writable ..."`` when the lock file
        cannot be made (a read-only folder: nothing can be stored there).
    """
    key = Path(run_dir).resolve()
    if key not in _HELD:
        _HELD[key] = [_acquire(key, run_dir, command), 0]
    _HELD[key][1] += 1
    try:
        yield
    finally:
        _HELD[key][1] -= 1
        if not _HELD[key][1]:
            fd = _HELD.pop(key)[0]
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _acquire(key: Path, run_dir: str | Path, command: str) -> int:
    """Open and lock ``key / run.lock`` for :func:`run_lock` (its errors), writing
    this process's PID and ``command`` into it; the open file descriptor."""
    try:
        fd = os.open(key / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise not_writable(run_dir, f"{command} stores to it") from None
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        who = holder(key)
        raise StoreError(f"{run_dir} is in use by {who}; wait for it to finish or stop it, then try again "
                         "(one kstrata optimize or retime at a time per run)") from None
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {command}\n".encode())
    except OSError:
        pass  # a full disk: the lock holds without its note
    return fd


def check_free(run_dir: str | Path, command: str) -> None:
    """Refuse at once (:func:`run_lock`'s errors) when another process writes
    ``run_dir``, before a command's slow start; the command takes the lock
    for its writes later."""
    with run_lock(run_dir, command):
        pass
