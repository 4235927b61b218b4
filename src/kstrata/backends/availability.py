"""Whether a backend can run on this machine: :class:`Availability`.

Kept apart from :mod:`kstrata.backends.base` (which imports torch through the task
model) so that the command line's light paths (``kstrata --help``, ``kstrata setup``,
an unknown backend's error) answer without loading torch.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Availability:
    """Whether a backend can run here, and why not.

    Attributes
    ----------
    usable:
        True when the backend's DSL and target are present.
    reason:
        Why not, in one sentence that says what to install or run (empty when usable).
    versions:
        ``(package, version)`` pairs of what the backend runs with, for reports.
    """

    usable: bool
    reason: str = ""
    versions: tuple[tuple[str, str], ...] = ()
