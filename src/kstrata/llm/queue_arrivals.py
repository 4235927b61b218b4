"""Which answer files of a ``queue:DIR`` folder arrived whole, by a rename.

An answer renamed into place (the file protocol's recommended way: write
``.<id>.response.md.tmp``, then rename it) cannot be half-written: its content
was complete before its name appeared. A file written in place can be, so the
queue provider waits for it to settle (``settle_s``). The two look alike to
``stat`` (a program that writes and renames at once leaves the same size,
mtime and ctime), so the provider asks the kernel, through watchdog's inotify
observer (:class:`watchdog.observers.inotify.InotifyObserver`, Linux): a rename
into the folder is a :class:`~watchdog.events.FileMovedEvent` whose
``dest_path`` is the answer, a write a ``FileModifiedEvent``.

:class:`Arrivals` watches one folder (not its subfolders) and answers "did
``name`` arrive by a rename, with nothing written to it since?". Watchdog hands
events over on its own threads, so before answering, :meth:`Arrivals.whole`
creates (and removes) a marker file ``.arrivals.*.tmp`` in the folder and waits
until the observer has passed its creation on: every event the kernel queued
before it (a write the file's reader may have seen) has then been handled too,
and a marker that does not come back proves the watch is not on the folder
now at that path.

Whatever it cannot tell reads as "not known whole", and the provider waits for
the file to settle as before: not Linux (the other observers are not used:
polling cannot tell a rename from a write), watchdog missing, no inotify
instance left, the folder missing, removed or moved away, a network filesystem
whose writes happen on another host, an event queue that overflowed, a marker
not handed back within ``MARK_WAIT_S``. This only ever shortens a wait, never
reads a file that might be incomplete.
"""

from __future__ import annotations

import os
import tempfile
import threading
import weakref
from pathlib import Path

try:  # Linux only: inotify
    from watchdog.events import (
        DirDeletedEvent,
        EventsLostEvent,
        FileClosedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
        FileSystemEvent,
        FileSystemEventHandler,
    )
    from watchdog.observers.inotify import InotifyObserver
except ImportError:  # not Linux (no inotify), or watchdog missing: every answer settles
    InotifyObserver = None
    FileSystemEventHandler = object

#: seconds :meth:`Arrivals.whole` waits for its marker's event; past it the watch is blind.
#: Above watchdog's 0.5 s hold of a rename's first half (``InotifyMoveEventGrouper.delay``),
#: which holds the events behind it too.
MARK_WAIT_S = 2.0
_MARK_PREFIX, _MARK_SUFFIX = ".arrivals.", ".tmp"


class _Names(FileSystemEventHandler):  # type: ignore[misc,valid-type]
    """The observer thread's side: the answers whole, the markers seen.

    Holds no reference to its :class:`Arrivals`, so that dropping the
    provider stops the observer (see ``weakref.finalize`` there)."""

    def __init__(self, directory: str, suffix: str) -> None:
        self.directory = directory
        self.suffix = suffix
        self.changed = threading.Condition()
        self.names: dict[str, int] = {}  # name -> the generation of its last rename-in, while whole
        self.generation = 0
        self.marks: set[str] = set()  # markers whose creation was passed on
        self.blind = False

    def dispatch(self, event: FileSystemEvent) -> None:
        src = os.path.basename(event.src_path) if event.src_path else ""
        with self.changed:
            if isinstance(event, EventsLostEvent) or (
                isinstance(event, DirDeletedEvent) and event.src_path == self.directory
            ):
                self.blind = True
                self.names.clear()
            elif isinstance(event, FileMovedEvent):
                self.names.pop(src, None)  # renamed away (or over)
                dest = os.path.basename(event.dest_path) if event.dest_path else ""
                if dest.endswith(self.suffix):
                    self.generation += 1
                    self.names[dest] = self.generation
            elif isinstance(event, FileCreatedEvent) and src.startswith(_MARK_PREFIX):
                self.marks.add(src)
            elif isinstance(event, (FileModifiedEvent, FileCreatedEvent, FileDeletedEvent, FileClosedEvent)):
                self.names.pop(src, None)  # written, truncated, created in place, closed after writing, removed
            self.changed.notify_all()


def _stop(observer: InotifyObserver) -> None:  # type: ignore[valid-type]
    try:
        observer.stop()  # stops and joins watchdog's reader and emitter threads, closes the inotify instance
        if observer.is_alive() and observer is not threading.current_thread():
            observer.join(timeout=MARK_WAIT_S)
    except (OSError, RuntimeError):  # already stopping, or called on one of its own threads
        pass


class Arrivals:
    """A watch on ``directory`` that tells which names arrived whole.

    Parameters
    ----------
    directory:
        The queue folder (it must exist). Nothing is raised when it cannot be
        watched: :attr:`blind` is then true and :meth:`whole` always ``None``.
    suffix:
        Only names ending so are followed (the answers; the requests kstrata
        writes itself are not kept).

    A watchdog observer (four threads, one inotify instance) runs until
    :meth:`close`, or until the object is garbage. Thread-safe.
    """

    def __init__(self, directory: str | Path, suffix: str = ".response.md") -> None:
        self._directory = os.path.normpath(os.fspath(directory))
        self._names = _Names(self._directory, suffix)
        self._observer = None
        if InotifyObserver is None or not os.path.isdir(self._directory):
            self._names.blind = True
            return
        observer = InotifyObserver(generate_full_events=True)  # a move in from another folder is a move too
        try:
            observer.schedule(self._names, self._directory, recursive=False)
            observer.start()
        except (OSError, RuntimeError):  # folder gone, no inotify instance (EMFILE), no thread
            _stop(observer)
            self._names.blind = True
            return
        self._observer = observer
        self._finalizer = weakref.finalize(self, _stop, observer)
        # one marker's round trip: the watch works, and watchdog's reader has reached its first read
        # (stopped before that, watchdog 7.1 leaves its inotify descriptor and pipe open)
        if not self._caught_up():
            self.close()

    @property
    def blind(self) -> bool:
        """Whether the watch tells nothing any more (then :meth:`whole` is ``None``)."""
        return self._names.blind

    def close(self) -> None:
        """Stop watching (idempotent); :meth:`whole` then returns ``None``."""
        with self._names.changed:
            self._names.blind = True
            self._names.names.clear()
            self._names.changed.notify_all()
        if self._observer is not None:
            self._finalizer()  # stops the observer once

    def whole(self, name: str) -> int | None:
        """A token when ``name`` (a file name in the folder) last arrived by a
        rename and has not been written, created, removed or renamed away
        since, else ``None``. Read the file, then call again: the content read
        is the whole answer when the same token comes back (another write or
        rename in between changes or clears it). Takes a marker's round trip
        through the observer (milliseconds; up to ``MARK_WAIT_S`` seconds)."""
        if not self.blind and self._caught_up():
            with self._names.changed:
                token = None if self._names.blind else self._names.names.get(name)
            if token is not None:
                return token
        if self.blind:
            self.close()  # its observer's threads and inotify instance are of no more use
        return None

    def _caught_up(self) -> bool:
        """Whether the observer has handled every event queued before this call."""
        try:
            fd, path = tempfile.mkstemp(prefix=_MARK_PREFIX, suffix=_MARK_SUFFIX, dir=self._directory)
        except OSError:  # folder gone or read-only: nothing can be told
            return False
        os.close(fd)
        mark = os.path.basename(path)
        try:
            with self._names.changed:
                seen = self._names.changed.wait_for(
                    lambda: mark in self._names.marks or self._names.blind, MARK_WAIT_S
                )
                self._names.marks.discard(mark)
                if not seen or self._names.blind:
                    self._names.blind = True  # the watch is not on this folder, or too slow to be of use
                    self._names.names.clear()
                    return False
                return True
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
