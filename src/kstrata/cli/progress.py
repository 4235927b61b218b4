"""A heartbeat for long CLI jobs: progress never goes silent for more than 30 s.

The search loop reports events (``evaluating``, ``proposing``, ``evaluated``,
``expanded``, ``retiming``, ``confirming``, ``stopped``); a step such as a MetaSchedule tuning
inside an expansion can take minutes between two of them. :class:`Heartbeat`
keeps a live status line on a terminal (the step and how long it has run,
redrawn every second, so it is never silent for more than a second) and,
off a terminal (a pipe, a CI log), prints a line at every event that ends a
step (the caller's progress callback does) and, while nothing changes, a
heartbeat line with the running time in it ("... (running 1 min 5 s)") every
:data:`QUIET_S` seconds: a log is never silent for longer either (issue #20: a
newcomer's log went quiet for 92 s when the gaps doubled), and no two of its
lines are alike. :data:`MAX_QUIET_S` can make the gaps double up to it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

#: Off a terminal: seconds from the last line to the first heartbeat line of an unchanged state.
QUIET_S = 30.0
#: Off a terminal: the longest gap between heartbeat lines of one unchanged state, in seconds
#: (equal to :data:`QUIET_S`: a steady line every 30 s; larger, the gaps double up to it).
MAX_QUIET_S = QUIET_S

#: What each event that starts a step is shown as.
STEPS = {
    "evaluating": "verifying and timing {node}",
    "proposing": "proposing {level} edits of {node} ({how})",
    "retiming": "re-timing contender {node} in the final, longer round",
    "confirming": "verifying the best, {node}, at the full scope",
}


def duration_text(seconds: float) -> str:
    """``"42 s"``, ``"3 min 5 s"`` or ``"1 h 2 min"`` (whole seconds)."""
    sec = int(seconds)
    if sec < 60:
        return f"{sec} s"
    if sec < 3600:
        return f"{sec // 60} min {sec % 60} s"
    return f"{sec // 3600} h {sec % 3600 // 60} min"


def proposing_how(backend: str, proposer: str) -> str:
    """How a ``proposing`` step makes its edits, in words: MetaSchedule tuning
    is named only where it can run (the built-in rules on a ``tvm-*`` backend)."""
    tuning = " and MetaSchedule tuning" if backend.startswith("tvm-") else ""
    if proposer.startswith("llm"):
        return "an LLM call"
    if proposer == "builtin":
        return f"the built-in proposer's rules{tuning}"
    return f"an LLM call, or the built-in proposer's rules{tuning}"


def timed(backend: str) -> bool:
    """Whether ``backend``'s evaluations time the candidate (not on an
    interpreter such as ``triton-interp``: newcomer nc14 read "verifying and
    timing" there); an unknown or empty name counts as timed."""
    from kstrata.backends.registry import UnknownBackendError, get_backend

    try:
        return bool(getattr(get_backend(backend), "timing_meaningful", True)) if backend else True
    except UnknownBackendError:
        return True


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
    quiet_s, max_quiet_s:
        Off a terminal, the first heartbeat line of an unchanged state comes
        ``quiet_s`` after the last line; each next one after twice the gap
        before, at most ``max_quiet_s``. A step starting or an event resets
        the gap to ``quiet_s``.
    clock:
        Seconds, monotonic (a test passes its own).
    line_events:
        The events after which the wrapped callback itself prints a line off a
        terminal (``None``: every event). Only those restart the silence; an
        event that only updates ``status`` does not (``optimize`` prints on
        ``evaluated`` and ``stopped`` only: a log went 57 s without a line when
        a proposal event between two steps restarted the count).
    waiting:
        While a ``proposing`` step runs, what it waits for, said after the
        step (``queue:DIR``: the request file to answer,
        :func:`kstrata.llm.file_queue.waiting_text`); ``None`` or a callable
        returning ``None``: nothing more.
    backend:
        The run's backend name, where an event's info names none: an
        ``evaluating`` step on one that times nothing (``triton-interp``)
        reads "verifying", not "verifying and timing".
    """

    def __init__(self, status: Any, emit_line: Callable[[str], None] | None, quiet_s: float = QUIET_S,
                 max_quiet_s: float = MAX_QUIET_S, clock: Callable[[], float] = time.monotonic,
                 line_events: Iterable[str] | None = None, waiting: Callable[[], str | None] | None = None,
                 backend: str = ""):
        self.status, self.emit_line, self.clock, self.backend = status, emit_line, clock, backend
        self.waiting, self.step_event = waiting, ""
        self.line_events = None if line_events is None else frozenset(line_events)
        self.quiet_s, self.max_quiet_s = quiet_s, max(quiet_s, max_quiet_s)
        self.base = ""
        self.step: str | None = None
        self.step_start = self.last_line = self.changed = clock()
        self.beats = 0  # heartbeat lines printed since the last change
        self.heard = False  # whether any event came yet: before one, nothing "changed" (newcomer nc23)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def wrap(self, progress: Callable[[str, dict], None]) -> Callable[[str, dict], None]:
        """``progress`` plus step tracking; step-start events are shown by the heartbeat only."""

        def wrapped(event: str, info: dict) -> None:
            node = info.get("node")
            self.heard = True
            if event in STEPS:
                how = proposing_how(str(info.get("backend") or ""), str(info.get("proposer") or ""))
                backend = str(info.get("backend") or self.backend)
                text = STEPS[event] if event != "evaluating" or timed(backend) \
                    else "verifying {node} (nothing is timed on " + backend + ")"
                self.begin(text.format(node=getattr(node, "hash", "?")[:8], level=info.get("level", "?"),
                                       how=how), event)
                return
            self.step = None
            # the line as the last event left it, without the step's text: a callback that leaves it alone for
            # this event (bench, on 'expanded') kept the step in base, and each next step stacked on it
            # (newcomer nc20: "proposing graph edits ... · proposing schedule edits ... · proposing source ...")
            self.status.plain = self.base
            progress(event, info)
            self.base = self.status.plain
            self.changed = self.clock()
            if self.line_events is None or event in self.line_events:
                self.last_line = self.changed
            self.beats = 0

        return wrapped

    def begin(self, step: str, event: str = "") -> None:
        """Start a step shown as ``step`` (with its running time), outside the
        search's events (``kstrata export``'s full-scope verification)."""
        self.step, self.step_event, self.beats = step, event, 0
        self.step_start = self.changed = self.clock()
        self.heard = True
        self.tick()

    def gap(self) -> float:
        """Seconds of silence after which the next heartbeat line is printed off a terminal."""
        return min(self.quiet_s * 2 ** self.beats, self.max_quiet_s)

    def tick(self) -> None:
        """Redraw the status line (the running step and its time, or the time
        since the last event once it passes ``quiet_s``); off a terminal,
        print it when the silence has lasted :meth:`gap`. A line printed that
        way always holds a running time, so no two are alike."""
        now = self.clock()
        line, sep = self.base, " · " if self.base else ""
        if self.step:
            line += f"{sep}{self.step} (running {duration_text(now - self.step_start)})"
            more = self.waiting() if self.waiting is not None and self.step_event == "proposing" else None
            line += f"; {more}" if more else ""
        elif now - self.changed >= self.quiet_s and not self.heard:  # before the first event: no change to tell
            line += f"{sep}starting (running {duration_text(now - self.changed)})"
        elif now - self.changed >= self.quiet_s:  # between steps: the time since the last event
            line += f"{sep}no change for {duration_text(now - self.changed)}"
        self.status.plain = line
        if self.emit_line is not None and now - self.last_line >= self.gap():
            self.emit_line(line)
            self.last_line = now
            self.beats += 1

    def _run(self) -> None:
        while not self._stop.wait(min(1.0, self.quiet_s / 3)):
            self.tick()

    def __enter__(self) -> Heartbeat:
        self._thread = threading.Thread(target=self._run, name="kstrata-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
