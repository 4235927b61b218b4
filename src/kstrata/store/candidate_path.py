"""A run's ``candidates/<prefix>`` path as the candidate folder it names."""

from __future__ import annotations

from pathlib import Path

from kstrata.store.artifacts import candidate_dir
from kstrata.store.run_store import RunStore


def candidate_path(path: str | Path) -> Path:
    """``RUN/candidates/<prefix>`` as ``RUN/candidates/<full hash>``, the prefix
    resolved by the run's store (:meth:`RunStore.resolve`, as ``kstrata show``,
    ``export --candidate`` and ``retime`` take a prefix); ``path`` itself when it
    exists or is not a ``candidates/`` entry of a run (a plain file, ``best/``).

    Raises
    ------
    StoreError
        When the prefix matches no candidate of the run, or several (the
        message says which, and what to give instead), or the run cannot be opened.
    """
    path = Path(path)
    parent = path.parent
    if path.exists() or not path.name or parent.name != "candidates" or not RunStore.exists(parent.parent):
        return path
    with RunStore.open(parent.parent) as store:
        digest = store.resolve(path.name)
    return candidate_dir(parent.parent, digest)
