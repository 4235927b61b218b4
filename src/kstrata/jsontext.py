"""JSON text from files kstrata wrote but anyone could have edited.

``json.loads`` raises ``RecursionError``, not ``ValueError``, on text nested
deeper than the interpreter's recursion limit (``"[" * 100000``). The places
that read kstrata's own files back (a run's ``config.json``, an export's
``export.json``, the caches under ``~/.cache/kstrata``) catch ``ValueError``
for a damaged file, so a deeply nested one ended ``kstrata eval`` of a run's
``best/`` or of an export folder in a traceback (red team rt62).
"""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, with nesting too deep for the parser a ``ValueError``.

    Raises
    ------
    ValueError
        When ``text`` is not JSON, or is nested too deep to parse."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deep to read") from None
