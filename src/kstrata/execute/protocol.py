"""Length-prefixed pickle messages over pipe file descriptors.

A message is an 8-byte big-endian unsigned length followed by that many bytes
of a :mod:`pickle` payload (protocol 4, readable by Python >= 3.8, so a worker
may run another interpreter). Only kstrata's own parent and workers speak it.
"""

from __future__ import annotations

import os
import pickle
import struct
from typing import Any

_HEADER = struct.Struct(">Q")
PICKLE_PROTOCOL = 4


class ChannelClosed(EOFError):
    """The other end closed the pipe (the process exited or crashed)."""


def _read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise ChannelClosed("pipe closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def send(fd: int, obj: Any) -> None:
    """Pickle ``obj`` and write it to ``fd`` with its length prefix.

    Raises
    ------
    pickle.PicklingError, TypeError, AttributeError
        If ``obj`` cannot be pickled (nothing is written then).
    BrokenPipeError
        If the reader has gone.
    """
    payload = pickle.dumps(obj, protocol=PICKLE_PROTOCOL)
    data = _HEADER.pack(len(payload)) + payload
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def recv(fd: int) -> Any:
    """Read one message from ``fd`` (blocking).

    Raises
    ------
    ChannelClosed
        On end of file before a whole message arrived.
    """
    (n,) = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    return pickle.loads(_read_exact(fd, n))
