"""What one candidate leaves in its sandbox, removed before the next one runs there.

A zygote's sandbox (:class:`kstrata.sandbox.client.Zygote`) serves one
candidate after another, and everything its processes share outlives them: the
private ``/tmp`` tmpfs (also ``HOME``), ``/dev/shm`` and the System V IPC
objects of the sandbox's IPC namespace. A file left there by one candidate was
readable by the next (its sources, a Triton or TorchInductor cache entry
planted under a later kernel's key, a module where a later import looks), which
is the contamination across candidates of the red-team cases 04 and 21 in
another form. After :func:`kstrata.sandbox.child.zygote_main` has ended a
candidate's processes, :func:`scrub` removes all of it; nothing a candidate
wrote is read by a later one. (The price: a candidate's own later processes
JIT-compile again, since its compiler caches go too.)
"""

from __future__ import annotations

import os
import re
import stat

#: The writable places a sandbox's processes share (every other path is a read-only bind).
SHARED_DIRS = ("/tmp", "/dev/shm")

#: ``/proc/sysvipc`` tables and the ``*ctl`` call that removes an entry
#: (``IPC_RMID`` = 0; the id is the second column of each table).
_IPC = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))


def _modes(dirs: tuple[str, ...]) -> dict[str, int]:
    out = {}
    for d in dirs:
        try:
            out[d] = stat.S_IMODE(os.stat(d).st_mode)
        except OSError:
            pass
    return out


#: The shared directories' own modes as the sandbox made them, taken when the
#: zygote imports this module (before it forks its first candidate): a
#: candidate that ``chmod``s ``/tmp`` (0333: nothing can list it) must not hide
#: its files from :func:`scrub`, nor pass the mode on as a signal.
PRISTINE_MODES = _modes(SHARED_DIRS)


def _mounted(dirs: tuple[str, ...], mountinfo: str = "/proc/self/mountinfo") -> frozenset[str]:
    """The mount points below ``dirs`` (host paths the sandbox binds there: kstrata's sources or its
    virtual environment when they live under ``/tmp``) and every directory between them and ``dirs``."""
    keep: set[str] = set()
    try:
        with open(mountinfo) as f:
            lines = f.read().splitlines()
    except OSError:
        return frozenset()
    for line in lines:
        cols = line.split()
        if len(cols) < 5:
            continue
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), cols[4])
        for d in dirs:
            if point.startswith(d.rstrip("/") + "/"):
                while point != d and point not in keep:
                    keep.add(point)
                    point = os.path.dirname(point)
    return frozenset(keep)


#: Paths below the shared directories that the sandbox made (mount points, the directories that lead to
#: them), taken when the zygote imports this module: :func:`scrub` keeps them (a read-only bind cannot be
#: removed) and empties what a candidate put among them. Where kstrata lived under ``/tmp`` (a clone or
#: a virtual environment there) the scrub after rt85 failed on them and ended the zygote after every
#: candidate, so no zygote was ever used twice (tests/sandbox in a worktree under /tmp: 18 failed).
KEPT = _mounted(SHARED_DIRS)


class ScrubError(RuntimeError):
    """Something a candidate left in its sandbox could not be removed: the
    zygote that calls :func:`scrub` ends (its sandbox with it), so no later
    candidate is forked where it lies."""


def scrub(dirs: tuple[str, ...] = SHARED_DIRS) -> list[str]:
    """Give ``dirs`` back their modes (:data:`PRISTINE_MODES`) and extended
    attributes, empty them, and remove the IPC namespace's System V objects.
    Returns ``[]``. (POSIX message queues need no removal: ``mq_open`` is
    refused by the sandbox's seccomp filter,
    :data:`kstrata.sandbox.policy.DENIED_SYSCALLS_X86_64`.)

    Every directory met is given back read, write and search permission
    before it is entered (the candidate's uid owns them all) and trees are
    walked without recursion (:func:`_remove_tree`). Python 3.11's
    ``shutil.rmtree`` skipped the subdirectories of a directory the candidate
    had made readable but not searchable (mode 0400: it cannot ``stat`` an
    entry there), the list of what was left went unread, and the next
    candidate forked by the same zygote read the files under them; a
    directory of mode 000 or a tree deeper than the recursion limit made it
    raise (red team rt85).

    Raises
    ------
    ScrubError
        Naming what is still there after the sweep (or why a directory could
        not be emptied): the caller, the zygote, must not serve another
        candidate in this sandbox.

    Only for a sandbox's own ``/tmp`` and ``/dev/shm``: called outside a
    sandbox it would empty the host's."""
    left: list[str] = []
    for d in dirs:
        if not os.path.isdir(d):
            continue
        _restore(d, PRISTINE_MODES.get(d))
        try:
            _empty(d, KEPT)
        except (OSError, ValueError) as e:
            left.append(f"{d}: {e}")
        try:
            rest = os.listdir(d)
        except OSError as e:
            left.append(f"{d}: {e}")
            continue
        left += [os.path.join(d, name) for name in rest if os.path.join(d, name) not in KEPT][:20]
    left += _remove_ipc()
    if left:
        raise ScrubError("the sandbox could not be emptied: " + ", ".join(left[:20]))
    return []


#: ``open`` flags of a directory the scrub enters (never through a link)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _empty(path: str, keep: frozenset[str] = frozenset()) -> None:
    """Remove everything inside the directory ``path`` (kept itself), depth
    first without recursion and with one directory descriptor open at a time
    (a chain of thousands of directories needs neither stack nor descriptors):
    a directory is made ``0700`` before it is entered, left by ``..`` and
    removed by name once empty. Links are removed, never followed. Paths in
    ``keep`` (:data:`KEPT`) stay: a mount point is never entered, a directory
    leading to one is emptied of everything else and left in place. Only for
    a tree no process is changing (the candidate's processes are gone)."""
    fd = os.open(path, _DIR_FLAGS)
    names: list[str] = []  # the name of each directory entered, below path
    done: set[str] = set()  # kept directories already emptied
    try:
        while True:
            here = os.path.join(path, *names)
            sub = None
            with os.scandir(fd) as it:
                for entry in it:
                    full = os.path.join(here, entry.name)
                    if full in keep and (full in done or not any(k.startswith(full + "/") for k in keep)):
                        continue  # a mount point, or a kept directory already emptied
                    if entry.is_dir(follow_symlinks=False):
                        sub = entry.name
                        break
                    os.unlink(entry.name, dir_fd=fd)
            if sub is not None:
                if os.path.join(here, sub) not in keep:
                    os.chmod(sub, stat.S_IRWXU, dir_fd=fd)
                child = os.open(sub, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
                names.append(sub)
                continue
            if not names:
                return
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            name = names.pop()
            full = os.path.join(path, *names, name)
            if full in keep:
                done.add(full)
            else:
                os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)


def _restore(d: str, mode: int | None) -> None:
    """The directory ``d`` itself back to ``mode``, without the extended
    attributes a candidate may have set on it (same uid: both are allowed)."""
    try:
        if mode is not None and stat.S_IMODE(os.stat(d).st_mode) != mode:
            os.chmod(d, mode)
    except OSError:
        pass
    try:
        for name in os.listxattr(d):
            try:
                os.removexattr(d, name)
            except OSError:
                pass
    except OSError:
        pass


def _remove_ipc() -> list[str]:
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return []
    left = []
    for table, ctl in _IPC:
        try:
            with open(f"/proc/sysvipc/{table}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) < 2 or not cols[1].isdigit():
                continue
            ident = int(cols[1])
            rc = getattr(libc, ctl)(ident, 0, 0) if ctl == "semctl" else getattr(libc, ctl)(ident, 0, None)
            if rc != 0:
                left.append(f"sysv {table} {ident}")
    return left
