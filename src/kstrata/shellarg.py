"""Arguments of the commands kstrata prints for a person to paste into a shell."""

from __future__ import annotations

import shlex
from typing import Any


def arg(value: Any) -> str:
    """``value`` (a path, a task or backend name) as one shell word: quoted
    when it holds spaces, quotes or other characters a shell reads
    (newcomer nc16: ``--resume runs/мой прогон`` split in two when pasted);
    unchanged when it needs no quoting."""
    return shlex.quote(str(value))
