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
import stat
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


def _open_own(path: Path) -> int:
    """``path`` opened read-write (created 0644), as a regular file of the run's
    own: a symbolic link there, a hard link to a file elsewhere, or anything
    but a regular file is removed first. A run directory from elsewhere with
    ``run.lock -> ~/.bashrc`` had ``kstrata optimize --resume`` truncate that
    file and write its PID into it (red-team rt59).

    Raises
    ------
    OSError
        When the file cannot be removed or opened.
    """
    for _ in range(3):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
        except OSError as e:
            if e.errno != errno.ELOOP:
                raise
            path.unlink()  # a symbolic link: never written through
            continue
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            return fd
        os.close(fd)
        path.unlink()  # a FIFO or device, or a hard link to another file: not the run's own
    raise OSError(errno.EEXIST, "cannot be made a plain file of the run (replaced while opened)", str(path))


def _acquire(key: Path, run_dir: str | Path, command: str) -> int:
    """Open and lock ``key / run.lock`` for :func:`run_lock` (its errors), writing
    this process's PID and ``command`` into it; the open file descriptor."""
    try:
        fd = _open_own(key / LOCK_NAME)
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


def in_use_by(run_dir: str | Path) -> str | None:
    """Who writes ``run_dir`` now (:func:`holder`'s words, ``"PID 1234
    (kstrata optimize)"``), or None when no other process holds its lock (no
    ``run.lock``, one that cannot be read, or this process's own). The lock
    is only tried and let go at once, never kept or created: a command that
    refuses ``run_dir`` anyway says in one message that it is in use too
    (newcomer nc25: ``--out`` at a running run said "pass --resume", and
    only then did ``--resume`` say it was in use)."""
    path = Path(run_dir) / LOCK_NAME
    if path.resolve().parent in _HELD:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return holder(run_dir)
    except OSError:
        return None
    finally:
        os.close(fd)  # closing the only descriptor of this open file drops a lock it got
    return None
