"""The machine's available memory, and when kstrata's warm caches of processes give it back.

kstrata keeps processes warm for speed: idle sandbox zygotes
(:mod:`kstrata.sandbox.client`, about 230 MB each, unshared: each is its own
interpreter with torch imported) and idle judge workers
(:mod:`kstrata.execute.shared`, 0.4-0.9 GB each). They are caches: the next
candidate starts a new one where none is idle. On a machine whose memory is
short they held gigabytes that the judge's own float64 oracle, a candidate or
another job needed (a 2-worker test run on a 24 GB machine read 890 MiB
available; on this 24 GB machine three searches and two test runs kept 46
zygotes, 9 GB, while 2.3 GB were available). Where the machine is under
:func:`pressure`, an idle process is ended when it would be kept, and no spare
is started ahead.
"""

from __future__ import annotations

import os

import psutil

#: The environment variable that sets :func:`floor_bytes` (MiB; 0 keeps idle processes whatever the memory).
FLOOR_ENV = "KSTRATA_IDLE_MEMORY_FLOOR_MB"
#: The default floor as a share of physical memory, and its least value (bytes): near the point where
#: the kernel's OOM killer acts, not before (an idle process kept is seconds saved per candidate).
FLOOR_SHARE, FLOOR_MIN = 0.05, 1 << 30


def available() -> int:
    """The machine's available memory in bytes (``/proc/meminfo`` MemAvailable, through psutil)."""
    return int(psutil.virtual_memory().available)


def floor_bytes() -> int:
    """Available memory (bytes) under which idle processes are not kept: :data:`FLOOR_ENV` MiB when set
    to a whole number, else :data:`FLOOR_SHARE` of physical memory, at least :data:`FLOOR_MIN`
    (1.2 GB on a 24 GB machine)."""
    v = os.environ.get(FLOOR_ENV, "").strip()
    if v.isdigit():
        return int(v) << 20
    return max(FLOOR_MIN, int(psutil.virtual_memory().total * FLOOR_SHARE))


def pressure() -> bool:
    """Whether the machine's available memory is under :func:`floor_bytes` (a reading: ~0.1 ms)."""
    floor = floor_bytes()
    return floor > 0 and available() < floor
