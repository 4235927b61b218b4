"""Idle zygotes and judge workers are caches that yield where the machine's memory is short
(kstrata.execute.memory): on a 24 GB machine three searches and two test runs kept 46 zygotes
(9 GB) while 2.3 GB were available, and CI's judge found 890 MiB for its float64 oracle.
No real sandbox: zygote starts are stand-ins, the available memory is set by the floor."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sandbox"))

import zygote_fakes  # noqa: E402


@pytest.fixture
def fake_zygotes(monkeypatch):
    return zygote_fakes.fake_zygotes(monkeypatch, spares=1)


def _spec():
    from kstrata.sandbox import CandidateProcess

    return CandidateProcess("pytorch", memory_mb=2048, sandbox=True, kernel_cache="k")


def _short_of_memory(monkeypatch, short: bool) -> None:
    from kstrata.execute import memory

    # a floor above any machine's memory, or none at all
    monkeypatch.setenv(memory.FLOOR_ENV, str(1 << 30) if short else "0")


def test_a_zygote_given_back_under_memory_pressure_is_ended_and_no_spare_starts(monkeypatch, fake_zygotes):
    from kstrata.sandbox import client

    starts, kills = fake_zygotes
    _short_of_memory(monkeypatch, True)
    z = client.Zygote(_spec()).start()
    client._give_back(z)
    assert kills == [z] and client._IDLE == []
    assert client.start_spare(_spec()) == 0 and len(starts) == 1


def test_with_memory_to_spare_the_zygote_is_kept_and_a_spare_starts(monkeypatch, fake_zygotes):
    from kstrata.sandbox import client

    starts, kills = fake_zygotes
    _short_of_memory(monkeypatch, False)
    z = client.Zygote(_spec()).start()
    client._give_back(z)
    assert kills == [] and client._IDLE == [z]
    taken = client._take_idle(_spec())
    assert taken is z
    assert client.start_spare(_spec()) == 1
    for t in [t for t in threading.enumerate() if t.name == "kstrata-spare-zygote"]:
        t.join(10)
    assert len(starts) == 2 and len(client._IDLE) == 1


def test_an_idle_judge_pool_is_closed_under_memory_pressure(monkeypatch):
    from kstrata.execute import shared

    closed = []

    class Pool:
        _closed = False

        def close(self):
            closed.append(self)

    monkeypatch.setattr(shared, "_idle", type(shared._idle)())
    _short_of_memory(monkeypatch, True)
    p = Pool()
    shared._give_back(("k",), p, tainted=False)
    assert closed == [p] and not shared._idle
    _short_of_memory(monkeypatch, False)
    q = Pool()
    shared._give_back(("k",), q, tainted=False)
    assert closed == [p] and shared._idle[("k",)] == [q]


def test_the_floor_defaults_to_a_share_of_physical_memory(monkeypatch):
    import psutil

    from kstrata.execute import memory

    monkeypatch.delenv(memory.FLOOR_ENV, raising=False)
    total = psutil.virtual_memory().total
    assert memory.floor_bytes() == max(memory.FLOOR_MIN, int(total * memory.FLOOR_SHARE))
    monkeypatch.setenv(memory.FLOOR_ENV, "512")
    assert memory.floor_bytes() == 512 << 20
