"""SIGTERM handled like Ctrl-C in long CLI jobs: the run is kept and the
command says how to continue it.

A ``kill PID``, a scheduler's time limit or ``timeout`` sends SIGTERM, whose
default action ends Python at once: no ``finally`` runs, worker pools are
left behind, and the user is not told that ``--resume`` continues the run.
Inside :func:`sigterm_as_interrupt` SIGTERM raises :class:`Terminated`, a
:class:`KeyboardInterrupt`, so the same clean-up and hint as for Ctrl-C run;
the command exits with 143 (128 + SIGTERM, the shell's convention) instead of
130 (128 + SIGINT).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Exit status after SIGINT (Ctrl-C) and after SIGTERM: 128 + the signal number.
EXIT_INTERRUPTED, EXIT_TERMINATED = 128 + signal.SIGINT, 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while a :func:`sigterm_as_interrupt` block ran."""


def exit_status(exc: KeyboardInterrupt) -> int:
    """143 for :class:`Terminated`, 130 for Ctrl-C."""
    return int(EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED)


def interrupted_word(exc: KeyboardInterrupt) -> str:
    """``"terminated (SIGTERM)"`` or ``"interrupted"``, for the message."""
    return "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Raise :class:`Terminated` in the main thread on SIGTERM while the block
    runs; the previous handler is restored after it. Off the main thread
    (where Python cannot set handlers) the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
