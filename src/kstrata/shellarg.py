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


def resume_command(task: Any, backend: str, run_dir: Any, options: str = "") -> str:
    """The ``kstrata optimize TASK --backend BACKEND OPTIONS --resume RUN``
    line that continues a run, pasteable from any folder: a task given as a
    file (a ``.py`` name or an existing file) and the run directory are made
    absolute (newcomer nc21: ``kstrata optimize gated_sum.py ... --resume
    /abs/run`` failed from another folder with "no such task file"); a suite
    task name stays as it is. ``options`` (already quoted words, with a
    leading space) go before ``--resume``."""
    from pathlib import Path

    text = str(task)
    path = Path(text)
    if text and (path.suffix == ".py" or path.is_file()):
        text = str(path.resolve())
    return f"kstrata optimize {arg(text)} --backend {arg(backend)}{options} --resume {arg(Path(str(run_dir)).resolve())}"
