"""The CPUs this process may run on (``taskset``, a cpuset, a pinned lane),
which is what thread pools and MetaSchedule should size themselves to, not
the host's CPU count."""

from __future__ import annotations

import os


def allowed_cpus() -> set[int] | None:
    """The CPU ids this process may run on; None where the OS cannot say
    (no ``sched_getaffinity``, e.g. macOS)."""
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None


def allowed_cpu_count() -> int:
    """How many CPUs this process may run on (the host's count where the OS
    cannot say; at least 1)."""
    allowed = allowed_cpus()
    return len(allowed) if allowed else (os.cpu_count() or 1)
