"""Task names and paths told without importing torch: the command line checks a
task argument with :func:`check_task_argument` before anything heavy loads
(newcomer nc23: every argument error of ``kstrata eval`` and ``kstrata tasks
show`` took 10-11 s on a busy machine, torch imported before the check)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from kstrata.tasks.errors import TaskError

#: The shipped suite's folder (each ``*.py`` below it, not starting with ``_``, is a task named by its stem).
SUITE_DIR = Path(__file__).parent / "suite"


def suite_names() -> list[str]:
    """The shipped suite's task names (file stems), sorted, read from the folder alone."""
    return sorted({p.stem for p in SUITE_DIR.rglob("*.py") if not p.name.startswith("_")})


def suite_name(task: str | Path) -> str | None:
    """The suite name of a task argument that is a shipped suite task's file
    (``.../tasks/suite/level1/rmsnorm.py`` -> ``rmsnorm``): a ``.py`` file
    whose stem names a suite task and whose text is that task's, byte for
    byte (so a copy in another clone is named too, and an edited copy is
    not); ``None`` for a name, another file, or one that cannot be read. A
    command kstrata prints names the task so (newcomer nc27: ``kstrata
    optimize /.../src/kstrata/tasks/suite/level1/rmsnorm.py ...``)."""
    path = Path(task)
    if path.suffix != ".py" or path.name.startswith("_"):
        return None
    shipped = [p for p in SUITE_DIR.rglob(path.name)]
    try:
        if len(shipped) != 1 or not path.is_file() or path.read_bytes() != shipped[0].read_bytes():
            return None
    except OSError:
        return None
    return path.stem


def close_names(name: str, names: Iterable[str]) -> list[str]:
    """Up to 5 of ``names`` close to a mistyped ``name`` (by difflib, else
    those that contain it), for a "Did you mean" hint; what ``eval``, ``tasks
    show`` and ``bench --tasks`` suggest."""
    names = list(names)
    close = difflib.get_close_matches(name, names, n=5, cutoff=0.5)
    return close or [n for n in names if name.lower() in n.lower()][:5]


def unknown_task(name: str, names: Iterable[str]) -> TaskError:
    """The error for a task ``name`` that is none of ``names``, with the close ones suggested."""
    close = close_names(name, names)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return TaskError(f"unknown task {name!r}.{hint} `kstrata tasks list` shows all names; "
                     "a path to a task file works too.")


def check_task_argument(name_or_path: str, search_dir: str | Path | None = None) -> None:
    """Refuse a task argument that :func:`kstrata.tasks.loader.resolve_task`
    would refuse, where that can be told from names and paths alone: a
    ``.py`` path that is no file, or (without ``search_dir``) a name that is
    no suite task. Anything else passes, to be resolved in full.

    Raises
    ------
    TaskError
        With the message ``resolve_task`` gives for the same argument.
    """
    path = Path(name_or_path)
    if path.suffix == ".py" and not path.exists():
        raise TaskError(f"{path}: no such task file")
    if path.suffix != ".py" and not path.is_file() and search_dir is None \
            and name_or_path not in suite_names():
        raise unknown_task(name_or_path, suite_names())
