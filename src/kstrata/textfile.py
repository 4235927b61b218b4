"""Reading a user's text file (a task, a candidate, a JSON or JSONL record
file) no further than a limit.

``Path.read_text`` reads a file whole before anything looks at its length: a
4 GB file (a sparse one costs nothing to make) given as a candidate, a task,
an ``--initial`` JSON, a replay cassette or a memory export ended kstrata in a
``MemoryError`` traceback, and one larger than the machine's memory took all
of it (red team rt65). :func:`read_text` reads at most ``limit`` characters
and refuses a longer file by name.
"""

from __future__ import annotations

import os


class TextTooLarge(ValueError):
    """A file longer than its reader's limit; the message names the file and the limit."""


class UnreadableFile(OSError):
    """A file that opened but could not be read (``EIO``: ``/proc/self/mem``, a
    failing disk; ``EINVAL``): the message names the file. A user error
    (:data:`kstrata.cli.errors.USER_ERRORS`): a candidate or task given as a
    link to such a file ended ``kstrata eval`` in an ``OSError`` traceback
    that named no file (red team rt68)."""

    def __str__(self) -> str:
        return str(self.strerror)


def read_text(path: str | os.PathLike[str], limit: int, what: str, errors: str = "strict",
              encoding: str | None = None) -> str:
    """The text of the file ``path`` as ``Path.read_text(encoding, errors)``
    reads it, reading no more than ``limit`` characters.

    Parameters
    ----------
    limit:
        The most characters the file may hold.
    what:
        What the file is, for the message (``"a Python source file"``).

    Raises
    ------
    TextTooLarge
        When the file holds more than ``limit`` characters.
    UnreadableFile
        When the file opened but reading it failed.
    OSError, UnicodeDecodeError
        As ``open`` and ``read_text`` do.
    """
    with open(path, encoding=encoding, errors=errors) as f:
        try:
            text = f.read(limit + 1)
        except OSError as e:
            raise UnreadableFile(e.errno, f"{path}: cannot be read ({e.strerror or e}); give {what} "
                                 "that is a readable file") from None
    if len(text) > limit:
        raise TextTooLarge(f"{path}: over {limit} characters, more than {what} may have here")
    return text
