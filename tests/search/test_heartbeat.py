"""Progress that never goes silent: step-start events from the loop and a
heartbeat that prints the running step (off a terminal) at least every
``quiet_s`` seconds, even while one proposer call runs long."""

from __future__ import annotations

import time

from rich.text import Text
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask

from kstrata.cli.progress import Heartbeat
from kstrata.search import Budget, optimize


class SlowProposer(FakeProposer):
    def propose(self, *a, **k):
        time.sleep(0.8)  # stands in for a MetaSchedule tuning inside an expansion
        return super().propose(*a, **k)


def test_heartbeat_prints_the_running_step_during_a_long_expansion(tmp_path):
    status, lines, events = Text(""), [], []

    def progress(event, info):
        events.append(event)
        status.plain = f"evaluated {int(info['spent'].get('evaluations', 0))}"

    beat = Heartbeat(status, lines.append, quiet_s=0.3)
    with beat:
        optimize(FakeTask(), FakeBackend(), SlowProposer(), FakeEvaluator(), "greedy", Budget(evaluations=3),
                 tmp_path / "run", progress=beat.wrap(progress))
    assert "evaluating" not in events and "evaluated" in events  # step starts stay with the heartbeat
    during = [ln for ln in lines if "proposing" in ln]
    assert during, lines
    assert any(ln.startswith("evaluated ") for ln in during)  # the last state stays in the line
    assert all(ln.rstrip().endswith("s)") for ln in during)  # with the step's running time


def test_loop_reports_step_starts(tmp_path):
    events = []
    optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=2),
             tmp_path / "run", progress=lambda e, i: events.append(e))
    assert events[:2] == ["evaluating", "evaluated"] and "proposing" in events
    assert events.index("proposing") < events.index("expanded")


class _Node:
    hash = "abcdef0123456789"


def test_an_evaluating_step_on_triton_interp_says_nothing_is_timed():
    """newcomer nc14: triton-interp's progress read 'verifying and timing' though it times nothing."""
    for backend, want, not_want in (("triton-interp", "verifying abcdef01 (nothing is timed on triton-interp)",
                                     "timing"), ("tvm-llvm", "verifying and timing abcdef01", "nothing is timed")):
        status = Text("")
        beat = Heartbeat(status, None, backend=backend)
        beat.wrap(lambda e, i: None)("evaluating", {"node": _Node()})
        assert beat.step == want and not_want not in beat.step


def test_steps_do_not_stack_when_an_event_leaves_the_line_alone():
    # newcomer nc20 (bench --resume): "proposing graph edits ... · proposing schedule edits ... · proposing
    # source edits ... · verifying the best": the callback set the line on some events only
    status = Text("")

    def progress(event, info):
        if event == "evaluated":
            status.plain = "evaluated 1"

    wrapped = Heartbeat(status, None, quiet_s=60).wrap(progress)
    wrapped("evaluated", {})
    for level in ("graph", "schedule", "source"):
        wrapped("proposing", {"node": _Node(), "level": level})
        wrapped("expanded", {"node": _Node(), "level": level})  # not drawn by the callback
    wrapped("proposing", {"node": _Node(), "level": "source"})
    assert status.plain.count("proposing") == 1 and status.plain.startswith("evaluated 1"), status.plain
