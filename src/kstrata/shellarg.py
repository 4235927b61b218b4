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


def task_arg(task: Any) -> str:
    """A task as a printed command names it, one shell word: a suite task's
    name, also where it is given as the shipped suite's own file
    (:func:`kstrata.tasks.names.suite_name`; newcomer nc27: ``kstrata
    optimize /.../src/kstrata/tasks/suite/level1/rmsnorm.py``); another task
    file made absolute, so the command is pasteable from any folder (newcomer
    nc21: ``gated_sum.py`` failed from another folder with "no such task
    file"). ``task`` is a name, a path, or a loaded task (its ``path``, else
    its ``name``)."""
    from pathlib import Path

    from kstrata.tasks.names import suite_name

    if not isinstance(task, (str, Path)):
        task = getattr(task, "path", None) or getattr(task, "name", None) or "TASK"
    text = str(task)
    path = Path(text)
    named = suite_name(text) if text else None
    if named:
        return arg(named)
    if text and (path.suffix == ".py" or path.is_file()):
        return arg(path.resolve())
    return arg(text)


def resume_command(task: Any, backend: str, run_dir: Any, options: str = "") -> str:
    """The ``kstrata optimize TASK --backend BACKEND OPTIONS --resume RUN``
    line that continues a run, pasteable from any folder: the task as
    :func:`task_arg` names it, the run directory made absolute.
    ``options`` (already quoted words, with a leading space) go before
    ``--resume``."""
    from pathlib import Path

    run = arg(Path(str(run_dir)).resolve())
    return f"kstrata optimize {task_arg(task)} --backend {arg(backend)}{options} --resume {run}"
