"""``perf stat`` hardware counters of a timed region on CPU (Linux).

Attaches ``perf stat -x, -e EVENTS -p PID`` to this process around a loop of
calls, then parses perf's CSV (``-x,``: ``value,unit,event,run-time,pct,...``;
``<not supported>``/``<not counted>`` for unavailable counters). Virtual
machines and ``perf_event_paranoid >= 3`` often expose no hardware counters;
:func:`status` says so and callers fall back to roofline-only findings.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

EVENTS = ("instructions", "cycles", "cache-references", "cache-misses", "LLC-load-misses",
          "L1-dcache-load-misses", "branch-misses")


def parse_stat_csv(text: str) -> dict[str, float | None]:
    """``perf stat -x,`` output -> ``{event: count}`` (None when not supported/counted)."""
    out: dict[str, float | None] = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) < 3 or line.startswith("#"):
            continue
        value, event = parts[0].strip(), parts[2].strip()
        if not event:
            continue
        try:
            out[event] = float(value)
        except ValueError:
            out[event] = None  # <not supported>, <not counted>
    return out


@functools.lru_cache(maxsize=4)
def status(perf: str = "perf") -> tuple[bool, str]:
    """Whether ``perf stat`` can count hardware events here, and why not
    (checked once per process)."""
    if shutil.which(perf) is None:
        return False, "perf not found on PATH"
    try:
        proc = subprocess.run([perf, "stat", "-x,", "-e", "instructions", "true"],
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"perf stat failed: {e}"
    counts = parse_stat_csv(proc.stderr)
    if counts.get("instructions") is None:
        reason = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "no output"
        return False, f"hardware counters not available (perf stat -e instructions: {reason})"
    return True, ""


@dataclass
class PerfCounters:
    """Counts per call, or why there are none."""

    ok: bool
    reason: str = ""
    per_call: dict[str, float] = field(default_factory=dict)
    unsupported: list[str] = field(default_factory=list)


def count(fn: Callable[[], Any], calls: int = 20, events: tuple[str, ...] = EVENTS,
          perf: str = "perf", attach_s: float = 0.3) -> PerfCounters:
    """Count ``events`` over ``calls`` calls of ``fn`` in this process.

    ``perf`` is attached with ``-p`` (our pid), given ``attach_s`` to start,
    stopped with SIGINT after the calls; counts are divided by ``calls``. The
    attach/detach slack adds a little idle time, not kernel work.
    """
    ok, reason = status(perf)
    if not ok:
        return PerfCounters(False, reason)
    with tempfile.NamedTemporaryFile("w+", suffix=".perf") as out:
        proc = subprocess.Popen([perf, "stat", "-x,", "-e", ",".join(events), "-p", str(os.getpid()),
                                 "-o", out.name], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(attach_s)
        for _ in range(calls):
            fn()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            return PerfCounters(False, "perf stat did not stop")
        counts = parse_stat_csv(open(out.name).read())
    per_call = {k: v / calls for k, v in counts.items() if v is not None}
    return PerfCounters(True, "", per_call, [k for k, v in counts.items() if v is None])
