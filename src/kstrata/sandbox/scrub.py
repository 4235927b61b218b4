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
import shutil
import stat
import sys

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


def scrub(dirs: tuple[str, ...] = SHARED_DIRS) -> list[str]:
    """Give ``dirs`` back their modes (:data:`PRISTINE_MODES`) and extended
    attributes, empty them, and remove the IPC namespace's System V objects.
    Returns what could not be removed (``[]`` normally); never raises.
    (POSIX message queues need no removal: ``mq_open`` is refused by the
    sandbox's seccomp filter, :data:`kstrata.sandbox.policy.DENIED_SYSCALLS_X86_64`.)

    Only for a sandbox's own ``/tmp`` and ``/dev/shm``: called outside a
    sandbox it would empty the host's."""
    left: list[str] = []
    for d in dirs:
        _restore(d, PRISTINE_MODES.get(d))
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            path = os.path.join(d, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    if sys.version_info >= (3, 12):
                        shutil.rmtree(path, onexc=_writable_and_retry)
                    else:
                        shutil.rmtree(path, onerror=_writable_and_retry)
                else:
                    os.unlink(path)
            except OSError:
                if os.path.lexists(path):
                    left.append(path)
    left += _remove_ipc()
    return left


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


def _writable_and_retry(fn, path, _exc) -> None:
    """A directory made unwritable (mode 000) by the candidate: same uid, so
    give it back its mode and retry."""
    parent = os.path.dirname(path)
    for p in (parent, path):
        try:
            os.chmod(p, stat.S_IRWXU)
        except OSError:
            pass
    fn(path)


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
