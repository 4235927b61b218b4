"""A heartbeat for long CLI jobs: progress never goes silent for more than 30 s.

The search loop reports events (``evaluating``, ``proposing``, ``evaluated``,
``expanded``, ``retiming``, ``confirming``, ``stopped``); a step such as a MetaSchedule tuning
inside an expansion can take minutes between two of them. :class:`Heartbeat`
keeps a live status line on a terminal (the step and how long it has run,
redrawn every second) and, off a terminal (a pipe, a CI log), prints a line
at every event that ends a step and at least every :data:`QUIET_S` seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

#: Longest silence off a terminal, in seconds.
QUIET_S = 25.0

#: What each event that starts a step is shown as.
STEPS = {
    "evaluating": "verifying and timing {node}",
    "proposing": "proposing {level} edits of {node} ({how})",
    "retiming": "re-timing contender {node} in the final, longer round",
    "confirming": "verifying the best, {node}, at the full scope",
}


def proposing_how(backend: str, proposer: str) -> str:
    """How a ``proposing`` step makes its edits, in words: MetaSchedule tuning
    is named only where it can run (the built-in rules on a ``tvm-*`` backend)."""
    tuning = " and MetaSchedule tuning" if backend.startswith("tvm-") else ""
    if proposer.startswith("llm"):
        return "an LLM call"
    if proposer == "builtin":
        return f"the built-in proposer's rules{tuning}"
    return f"an LLM call, or the built-in proposer's rules{tuning}"


class Heartbeat:
    """Wraps a ``progress(event, info)`` callback with a step clock.

    Parameters
    ----------
    status:
        A :class:`rich.text.Text` whose ``plain`` the wrapped callback sets;
        the heartbeat appends the running step to it.
    emit_line:
        Prints one line off a terminal (``None`` on a terminal: the live
        display redraws ``status`` itself).
    """

    def __init__(self, status: Any, emit_line: Callable[[str], None] | None, quiet_s: float = QUIET_S):
        self.status, self.emit_line, self.quiet_s = status, emit_line, quiet_s
        self.base = ""
        self.step: str | None = None
        self.step_start = self.last_line = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def wrap(self, progress: Callable[[str, dict], None]) -> Callable[[str, dict], None]:
        """``progress`` plus step tracking; step-start events are shown by the heartbeat only."""

        def wrapped(event: str, info: dict) -> None:
            node = info.get("node")
            if event in STEPS:
                how = proposing_how(str(info.get("backend") or ""), str(info.get("proposer") or ""))
                self.step = STEPS[event].format(node=getattr(node, "hash", "?")[:8], level=info.get("level", "?"),
                                                how=how)
                self.step_start = time.monotonic()
                self._refresh(force_line=False)
                return
            self.step = None
            progress(event, info)
            self.base = self.status.plain
            self.last_line = time.monotonic()

        return wrapped

    def _refresh(self, force_line: bool) -> None:
        now = time.monotonic()
        line = self.base
        if self.step:
            line = (line + " · " if line else "") + f"{self.step} ({now - self.step_start:.0f} s)"
        self.status.plain = line
        if self.emit_line is not None and (force_line or now - self.last_line >= self.quiet_s):
            self.emit_line(line)
            self.last_line = now

    def _run(self) -> None:
        while not self._stop.wait(min(1.0, self.quiet_s / 3)):
            self._refresh(force_line=False)

    def __enter__(self) -> Heartbeat:
        self._thread = threading.Thread(target=self._run, name="kstrata-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
