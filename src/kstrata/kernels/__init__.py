"""Initial candidates shipped as data files: ``kernels/<folder>/<task name>.py``.

Each file is a KernelBench-format candidate (``ModelNew`` plus kernels in the
DSL) for the suite task of the same name: straightforward, correct, untuned;
the starting point of ``kstrata optimize`` (the ``triton*`` and ``tilelang-*``
backends' ``initial_sources``).

Folders (:data:`DSLS`):

* ``triton``: Triton kernels (``triton`` on GPUs, ``triton-interp`` on CPU);
* ``tilelang``: TileLang in the CPU-portable form (``T.serial`` loops,
  ``threads=1``), the only form TileLang 0.1.15's C target lowers; the
  ``tilelang-c`` backend starts from these;
* ``tilelang_cuda``: TileLang in GPU form (``T.Parallel``, fragments,
  ``T.reduce_*``, tiles pipelined through shared memory); the
  ``tilelang-cuda`` backend starts from these and falls back to ``tilelang``
  for a task without a GPU form (:data:`FALLBACK`).

Each file declares its tunable parameters for the built-in proposer as
module-level integer constants with their choices in a marker comment, e.g.
``NUM_WARPS = 4  # kstrata-tune: {1, 2, 4, 8, 16}`` for Triton (see
:mod:`kstrata.backends.triton.tune_rules`) or a ``# kstrata-tune: block in
{...}`` comment on TileLang's ``SCHEDULE`` line (see
:mod:`kstrata.backends.tilelang.tune_rules`). The start values are the untuned
defaults (Triton's own ``num_warps=4``, ``num_stages=3``).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent

#: Folders of initial candidates, one per DSL form.
DSLS = ("triton", "tilelang", "tilelang_cuda")

#: Folder -> the folder searched next when it has no file for a task.
FALLBACK = {"tilelang_cuda": "tilelang"}


def _check(dsl: str) -> None:
    if dsl not in DSLS:
        raise ValueError(f"unknown DSL {dsl!r}; expected one of {DSLS}")


def initial_path(dsl: str, task_name: str, fallback: bool = True) -> Path | None:
    """The shipped initial candidate of ``task_name`` in folder ``dsl``, or None.

    With ``fallback``, a task without a file in ``dsl`` gets the one of
    ``FALLBACK[dsl]`` (a ``tilelang_cuda`` task without a GPU form gets its
    CPU form), if any.

    Raises
    ------
    ValueError
        When ``dsl`` is not one of :data:`DSLS`.
    """
    _check(dsl)
    path = ROOT / dsl / f"{task_name}.py"
    if path.is_file():
        return path
    if fallback and dsl in FALLBACK:
        return initial_path(FALLBACK[dsl], task_name)
    return None


def initial_source(dsl: str, task_name: str, fallback: bool = True) -> str | None:
    """Text of :func:`initial_path`, or None when there is none."""
    path = initial_path(dsl, task_name, fallback)
    return path.read_text() if path else None


def tasks_with_initial(dsl: str, fallback: bool = True) -> list[str]:
    """Names of the tasks that have a shipped initial candidate in ``dsl``
    (with ``fallback``, also those that get one from ``FALLBACK[dsl]``).

    Raises
    ------
    ValueError
        When ``dsl`` is not one of :data:`DSLS`.
    """
    _check(dsl)
    names = {p.stem for p in (ROOT / dsl).glob("*.py") if p.stem != "__init__"}
    if fallback and dsl in FALLBACK:
        names |= set(tasks_with_initial(FALLBACK[dsl]))
    return sorted(names)
