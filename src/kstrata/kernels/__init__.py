"""Initial candidates shipped as data files: ``kernels/<dsl>/<task name>.py``.

Each file is a KernelBench-format candidate (``ModelNew`` plus kernels in the
DSL) for the suite task of the same name: straightforward, correct, untuned;
the starting point of ``kstrata optimize`` (the ``triton*`` and ``tilelang-*``
backends' ``initial_sources``).

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

#: Backend-name prefix -> folder of initial candidates.
DSLS = ("triton", "tilelang")


def initial_path(dsl: str, task_name: str) -> Path | None:
    """The shipped initial candidate of ``task_name`` in ``dsl``, or None."""
    if dsl not in DSLS:
        raise ValueError(f"unknown DSL {dsl!r}; expected one of {DSLS}")
    path = ROOT / dsl / f"{task_name}.py"
    return path if path.is_file() else None


def initial_source(dsl: str, task_name: str) -> str | None:
    """Text of :func:`initial_path`, or None when there is none."""
    path = initial_path(dsl, task_name)
    return path.read_text() if path else None


def tasks_with_initial(dsl: str) -> list[str]:
    """Names of the tasks that have a shipped initial candidate in ``dsl``."""
    return sorted(p.stem for p in (ROOT / dsl).glob("*.py") if p.stem != "__init__")
