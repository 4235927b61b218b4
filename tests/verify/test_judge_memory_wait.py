"""The judge's float64 oracle waits for memory instead of giving up at one reading
(CI of 2026-12-06: gemv's hidden 8192 x 8192 test ended in an error because the
machine had 890 MiB available at one moment of a 2-worker test run)."""

from __future__ import annotations

import time

from kstrata.verify import judge_memory


def _readings(monkeypatch, values):
    seen = iter(values)
    last = {"v": values[-1]}

    def available():
        last["v"] = next(seen, last["v"])
        return last["v"]

    monkeypatch.setattr(judge_memory, "available", available)


def test_idle_sandboxes_are_ended_and_memory_freed_later_is_waited_for(monkeypatch):
    import kstrata.sandbox.client as client

    ended = []
    monkeypatch.setattr(client, "close_zygotes", lambda: ended.append(True))
    monkeypatch.setattr(judge_memory, "POLL_S", 0.01)
    _readings(monkeypatch, [100, 100, 200, 900, 2000])
    assert judge_memory.wait_for_memory(1000, wait_s=5) == 2000
    assert ended == [True]


def test_enough_memory_ends_nothing(monkeypatch):
    import kstrata.sandbox.client as client

    ended = []
    monkeypatch.setattr(client, "close_zygotes", lambda: ended.append(True))
    _readings(monkeypatch, [5000])
    assert judge_memory.wait_for_memory(1000) == 5000 and ended == []


def test_the_wait_stops_at_the_deadline_with_the_last_reading(monkeypatch):
    import kstrata.sandbox.client as client

    monkeypatch.setattr(client, "close_zygotes", lambda: None)
    monkeypatch.setattr(judge_memory, "POLL_S", 0.01)
    _readings(monkeypatch, [100, 300])
    t0 = time.monotonic()
    assert judge_memory.wait_for_memory(1000, deadline=time.monotonic() + 0.2, wait_s=30) == 300
    assert time.monotonic() - t0 < 5
