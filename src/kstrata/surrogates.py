"""Text from outside that no UTF-8 output can hold.

A JSON string may spell a lone surrogate (``"\\ud800"``): Python decodes it to
a ``str`` that every UTF-8 encoder refuses. From an LLM's answer (an
OpenAI-compatible or Anthropic reply, a cassette), an MCP client's source or
an ``--initial`` JSON file, such text reached the content hash, the run store
and the terminal, where it ended kstrata in a ``UnicodeEncodeError``
traceback (red-team rt57). Text from those sources passes through
:func:`without_lone_surrogates` first.
"""

from __future__ import annotations

import re

#: One UTF-16 surrogate code point (a valid ``str`` holds them only from such escapes).
SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(text: str) -> str:
    """``text`` with every surrogate code point replaced by U+FFFD (the
    replacement character), so that it encodes as UTF-8; ``text`` itself
    when it holds none."""
    return SURROGATE.sub("\ufffd", text) if SURROGATE.search(text) else text
