"""Keep the stdio MCP transport's stdout for the protocol alone.

Over stdio, every line on stdout must be one JSON-RPC message. A task module
that prints when imported (``print("loading")`` at top level) wrote into that
stream (newcomer nc21: "Failed to parse JSONRPC message"): the worker processes
that import tasks are started before the SDK diverts file descriptor 1, so they
inherited the protocol's descriptor as their stdout, and ``sys.stdout`` in
kstrata's own process buffered text that reached the wire once fd 1 was
restored. :func:`stdout_to_stderr` moves the protocol to a private duplicate of
fd 1 for the whole time the server lives, points fd 1 (inherited by every child
process) at stderr, and makes ``sys.stdout`` write text to stderr while its
``buffer`` is the protocol's binary stream, the one the transport takes.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


class _TextToStderr(io.TextIOBase):
    """A ``sys.stdout`` whose text goes to ``stderr``; ``buffer`` is the
    protocol's binary stream (for the transport, which serves ``sys.stdout.buffer``),
    ``fileno()`` stderr's descriptor (for a child process or ``faulthandler``)."""

    def __init__(self, wire: io.BufferedIOBase, stderr: TextIO) -> None:
        super().__init__()
        self._wire, self._stderr = wire, stderr

    @property
    def buffer(self) -> io.BufferedIOBase:  # the protocol's stream, never written through this object
        return self._wire

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stderr.encoding

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return self._stderr.write(text)

    def flush(self) -> None:
        self._stderr.flush()

    def fileno(self) -> int:
        return self._stderr.fileno()

    def isatty(self) -> bool:
        return self._stderr.isatty()


@contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """While the block runs, fd 1 and ``sys.stdout``'s text go to stderr and
    ``sys.stdout.buffer`` is the protocol's stream (a private duplicate of the
    original fd 1); what was already buffered is flushed first, and fd 1 and
    ``sys.stdout`` are restored afterwards."""
    real = sys.stdout
    real.flush()
    saved = os.dup(1)  # the protocol's descriptor, not inherited by children (os.dup is non-inheritable)
    os.dup2(sys.stderr.fileno(), 1)  # every child process and C library writing to fd 1 writes to stderr
    wire = os.fdopen(os.dup(saved), "wb")
    sys.stdout = _TextToStderr(wire, sys.stderr)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stdout = real
        wire.close()
        os.dup2(saved, 1)
        os.close(saved)
