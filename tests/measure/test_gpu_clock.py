"""GPU timed calls take the CUDA-event time the candidate's process reports,
held against the judge's wall clock around the same request (remote.clock_note).
The fake process below stands in for a GPU candidate process on this CPU."""

from __future__ import annotations

import pytest

from kstrata.measure.remote import RemoteCandidate, RemoteTimer, TimedOutputMismatch, clock_note


class FakeProc:
    """Answers ``run`` with a fixed CUDA-event time (or none) after sleeping ``wall_s``."""

    def __init__(self, device_ms: float | None, wall_s: float = 0.0):
        self.device_ms, self.wall_s = device_ms, wall_s

    def ok(self, h, bufs=None):
        import time

        if h["op"] == "run":
            time.sleep(self.wall_s)
            return ({"ok": True} if self.device_ms is None else {"ok": True, "device_ms": self.device_ms}), []
        return {"ok": True}, []


def _side(pairs):
    rc = RemoteCandidate(FakeProc(None))
    rc.clock = list(pairs)
    return rc


def test_a_gpu_timed_call_is_its_event_time_and_keeps_the_wall_clock_beside_it():
    rc = RemoteCandidate(FakeProc(0.04, wall_s=0.002))
    rc.overhead_ms = 0.5
    timer = RemoteTimer(lambda t: 0.0, "cuda:0")
    ms = timer(rc.thunks(1)[0])
    assert ms == pytest.approx(0.04)
    (wall, dev), = rc.clock
    assert dev == pytest.approx(0.04) and wall >= 2.0
    # on the CPU the judge's clock minus the round trip is the time, as before
    cpu = RemoteCandidate(FakeProc(None, wall_s=0.002))
    assert RemoteTimer(lambda t: 0.0, "cpu")(cpu.thunks(1)[0]) >= 1.9 and not cpu.clock


def test_a_gpu_call_without_its_event_time_is_rejected():
    rc = RemoteCandidate(FakeProc(None))
    with pytest.raises(TimedOutputMismatch):
        RemoteTimer(lambda t: 0.0, "cuda:0")(rc.thunks(1)[0])


def test_event_times_that_disagree_with_the_judges_clock_are_marked():
    base = _side([(0.30, 0.10)] * 20)                     # gap 0.20 ms
    assert clock_note(_side([(0.31, 0.10)] * 20), base) is None
    hidden = clock_note(_side([(0.45, 0.02)] * 20), base)  # 0.23 ms of every call hidden from the events
    assert hidden and hidden.startswith("clock disagreement") and "0.43 ms" in hidden
    longer = clock_note(_side([(0.05, 0.10)] + [(0.30, 0.10)] * 19))
    assert longer and "longer than the judge's wall clock" in longer
    assert clock_note(_side([])) is None


class CaptureProc(FakeProc):
    """Answers ``stage`` as a process that could (or could not) capture graphs,
    and keeps the ``run`` headers it received."""

    def __init__(self, captures: bool):
        super().__init__(0.01)
        self.captures, self.runs, self.stages = captures, [], []

    def ok(self, h, bufs=None):
        if h["op"] == "stage":
            self.stages.append(h)
            if not h.get("graph"):
                return {"ok": True}, []
            return ({"ok": True, "graph": True} if self.captures else
                    {"ok": True, "graph": False, "graph_error": "RuntimeError: operation not permitted"}), []
        if h["op"] == "run":
            self.runs.append(h)
        return super().ok(h, bufs)


def _staged(captures: bool, graph: bool = True) -> RemoteCandidate:
    rc = RemoteCandidate(CaptureProc(captures))
    rc.stage([[]], None, True, graph=graph)
    return rc


def test_both_sides_replay_graphs_or_neither_does():
    from kstrata.measure.remote import choose_graphs

    c, b = _staged(True), _staged(True)
    assert c.proc.stages[0]["graph"] is True and c.graphed
    assert choose_graphs(c, b) is None and c.use_graph and b.use_graph
    RemoteTimer(lambda t: 0.0, "cuda:0")(c.thunks(1)[0])
    assert c.proc.runs[-1]["graph"] is True
    # the candidate could not be captured: the baseline is not replayed either, and the reason is kept
    c, b = _staged(False), _staged(True)
    why = choose_graphs(c, b)
    assert why == "candidate: RuntimeError: operation not permitted" and not c.use_graph and not b.use_graph
    RemoteTimer(lambda t: 0.0, "cuda:0")(c.thunks(1)[0])
    assert c.proc.runs[-1]["graph"] is False
    # nor when the baseline could not (remote, or a local one that raised)
    assert choose_graphs(_staged(True), _staged(False)).startswith("baseline: RuntimeError")
    c = _staged(True)
    assert choose_graphs(c, None, "no graphs") == "baseline: no graphs" and not c.use_graph
    # not asked: nothing captured, nothing replayed
    c = _staged(True, graph=False)
    assert not c.graphed and c.graph_error is None and choose_graphs(c, None).startswith("candidate")
