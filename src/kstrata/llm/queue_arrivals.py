"""Which answer files of a ``queue:DIR`` folder arrived whole, by a rename.

An answer renamed into place (the file protocol's recommended way: write
``.<id>.response.md.tmp``, then rename it) cannot be half-written: its content
was complete before its name appeared. A file written in place can be, so the
queue provider waits for it to settle (``settle_s``). The two look alike to
``stat`` (a program that writes and renames at once leaves the same size,
mtime and ctime), so the provider asks the kernel: Linux inotify reports a
rename into the folder as ``IN_MOVED_TO`` and a write as ``IN_MODIFY``.

:class:`Arrivals` watches one folder and answers "did ``name`` arrive by a
rename, with nothing written to it since?". Whatever it cannot tell (not Linux,
no inotify instance left, a network filesystem whose writes happen on another
host, an event queue that overflowed, the folder removed) reads as "not known
whole", and the provider waits for the file to settle as before: this only
ever shortens a wait, never reads a file that might be incomplete.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import threading
import weakref
from pathlib import Path

# <sys/inotify.h>
IN_MODIFY = 0x00000002
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000

#: events on a name that make its content not known whole: written, truncated, (re)created in place,
#: closed after writing, removed or renamed away
_NOT_WHOLE = IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM
#: events after which the watch tells nothing more (folder gone or moved, events lost)
_BLIND = IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW | IN_IGNORED
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then len bytes of name)


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):  # not Linux (no inotify in its C library)
        return None
    return libc


_LIBC = _libc()


class Arrivals:
    """An inotify watch on ``directory`` that tells which names arrived whole.

    Parameters
    ----------
    directory:
        The queue folder (it must exist). Nothing is raised when it cannot be
        watched: :attr:`blind` is then true and :meth:`whole` always ``None``.
    suffix:
        Only names ending so are followed (the answers; the requests kstrata
        writes itself are not kept).

    Events are read when :meth:`whole` is called (no thread). Thread-safe.
    """

    def __init__(self, directory: str | Path, suffix: str = ".response.md") -> None:
        self._lock = threading.Lock()
        self._suffix = os.fsencode(suffix)
        self._names: dict[bytes, int] = {}  # name -> the generation of its last rename-in, while whole
        self._generation = 0
        self._fd = -1
        self.blind = True
        if _LIBC is None:
            return
        fd = _LIBC.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:  # EMFILE (max_user_instances) and the like: the provider waits for files to settle
            return
        mask = _NOT_WHOLE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
        if _LIBC.inotify_add_watch(fd, os.fsencode(os.fspath(directory)), mask) < 0:
            os.close(fd)
            return
        self._fd, self.blind = fd, False
        self._finalizer = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        """Stop watching (idempotent); :meth:`whole` then returns ``None``."""
        with self._lock:
            self._go_blind()

    def whole(self, name: str) -> int | None:
        """A token when ``name`` (a file name in the folder) last arrived by a
        rename and has not been written, created, removed or renamed away
        since, else ``None``. Read the file, then call again: the content read
        is the whole answer when the same token comes back (another write or
        rename in between changes or clears it)."""
        key = os.fsencode(name)
        with self._lock:
            self._drain()
            return self._names.get(key)

    def _drain(self) -> None:
        while not self.blind:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                self._go_blind()
                return
            at = 0
            while at + _HEADER.size <= len(data):
                _wd, mask, _cookie, size = _HEADER.unpack_from(data, at)
                name = data[at + _HEADER.size: at + _HEADER.size + size].rstrip(b"\0")
                at += _HEADER.size + size
                if mask & _BLIND:
                    self._go_blind()
                    return
                if not name.endswith(self._suffix):
                    continue
                if mask & IN_MOVED_TO:
                    self._generation += 1
                    self._names[name] = self._generation
                elif mask & _NOT_WHOLE:
                    self._names.pop(name, None)

    def _go_blind(self) -> None:
        self.blind = True
        self._names.clear()
        if self._fd >= 0:
            self._finalizer()  # closes the descriptor once
            self._fd = -1
