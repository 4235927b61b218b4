"""The errors a task file raises: :class:`TaskError` and :class:`ReferenceFailure`.

Kept apart from :mod:`kstrata.tasks.base` (which imports torch) so that the search
loop, which the light commands (``kstrata tree``, ``show``) import, can tell a task's
fault from a candidate's without loading torch.
"""

from __future__ import annotations


class TaskError(ValueError):
    """A task file that cannot be used; the message names the file and the fix."""


class ReferenceFailure(TaskError):
    """The task's own reference (or its float64 oracle) cannot run as a
    verification needs: it raises or returns something unusable at a shape the
    judge verifies at, runs out of memory, or is too slow for the time limit at
    the chosen shapes. Never a candidate's fault; the message names the
    reference, the shape and what to change (``--timeout``, the shapes)."""
