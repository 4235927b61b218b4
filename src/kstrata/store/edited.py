"""Whether a run's ``best/`` or ``candidates/<hash>/`` folder still holds what the run stored.

Those folders are copies, for reading and starting from; ``run.db`` holds the
candidate's sources, and ``kstrata export`` builds from there. A user who edits
``RUN/best/graph.py`` by hand has a new candidate that ``kstrata eval RUN/best``
checks while ``kstrata export RUN`` ships the stored one (newcomer nc24, case
``edited_best_eval_vs_export``: an inverted mask read ``incorrect`` in eval and
the original was exported, neither saying so). :func:`edited_copy` tells both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kstrata.store import artifacts


@dataclass(frozen=True)
class EditedCopy:
    """A run folder whose files differ from candidate ``digest``'s stored sources.

    ``run_dir``: the run; ``folder``: ``RUN/best`` or ``RUN/candidates/<hash>``;
    ``files``: the level files that differ from (or are missing beside) the stored text."""

    run_dir: Path
    folder: Path
    digest: str
    files: tuple[Path, ...]

    def names(self) -> str:
        """The edited files, relative to the current folder where they can be, comma-separated."""
        return ", ".join(str(f) for f in self.files)

    def differ(self) -> str:
        """The verb after :meth:`names`: ``differs`` for one edited file, ``differ`` for several."""
        return "differs" if len(self.files) == 1 else "differ"


def _held(folder: Path) -> tuple[Path, str] | None:
    """``(run_dir, hash)`` of the candidate ``folder`` holds, or None when it is no run folder
    (``best/``: the summary's best; ``candidates/<hash>/``: its name)."""
    from kstrata.store.run_store import StoreError, read_summary

    folder = Path(folder)
    if folder.name == "best" and (folder.parent / "run.db").is_file():
        try:
            summary = read_summary(folder.parent)
        except StoreError:
            return None
        best = (summary or {}).get("best") or {}
        return (folder.parent, str(best["hash"])) if best.get("hash") else None
    if folder.parent.name == "candidates" and (folder.parent.parent / "run.db").is_file():
        return folder.parent.parent, folder.name
    return None


def edited_copy(folder: str | Path, extensions: dict[str, str]) -> EditedCopy | None:
    """Compare the level files in ``folder`` (a run's ``best/`` or
    ``candidates/<hash>/``; a file in one counts as its folder) with the run's
    stored sources of the candidate it holds.

    Parameters
    ----------
    extensions:
        ``{level: extension}`` of the run's backend
        (:func:`kstrata.store.artifacts.backend_extensions`).

    Returns
    -------
    EditedCopy or None
        The files that differ, or None: not a run folder, the candidate unknown
        to the run, or every file as stored.
    """
    from kstrata.store.run_store import RunStore, StoreError

    folder = Path(folder)
    folder = folder if folder.is_dir() else folder.parent
    held = _held(folder)
    if held is None:
        return None
    run_dir, digest = held
    try:
        with RunStore.open(run_dir) as store:
            if not store.has_candidate(digest):
                return None
            stored = store.sources(digest)
    except StoreError:
        return None
    changed = []
    for level, text in stored.items():
        path = folder / artifacts.source_name(level, extensions)
        try:
            now = path.read_text()
        except (OSError, UnicodeDecodeError):
            now = None
        if now != text:
            changed.append(path)
    return EditedCopy(run_dir, folder, digest, tuple(changed)) if changed else None
