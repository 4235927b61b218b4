"""Red team rt77: several spare zygotes (abd8eae, KSTRATA_SPARE_ZYGOTES) and the idle list's cap.

A spare given back to a full idle list ended the least recently used idle zygote, whatever it was: another
settings' spare, or the trusted baseline's. With 3 spares on this 4-zygote machine and two settings in turn,
6 candidates started 21 zygotes, 13 ended unused (1 spare: 8), each start 4.5-10 s of CPU beside the judge.
Now spares fill only the room unmarked zygotes leave, and the cap ends marked ones (each serves one
candidate's processes of one role, red team rt68) first. No real sandbox: starts are stand-ins.
Case: tests/sandbox/cases/rt77_spares_evict.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from zygote_fakes import fake_zygotes  # noqa: E402

pytestmark = pytest.mark.usefixtures("keep_idle_processes")


def _fake(monkeypatch, spares: int, cap: int = 4) -> tuple[list, list]:
    return fake_zygotes(monkeypatch, spares, cap)


def _spec(memory_mb: int, trusted: bool = False):
    from kstrata.sandbox import CandidateProcess

    return CandidateProcess("pytorch", memory_mb=memory_mb, sandbox=True, kernel_cache="k", trusted=trusted)


def _wait() -> None:
    from kstrata.sandbox import client

    for t in [t for t in threading.enumerate() if t.name == "kstrata-spare-zygote"]:
        t.join(10)
    assert not client._STARTING


def test_spares_of_one_setting_never_end_another_settings_idle_zygotes(monkeypatch):
    from kstrata.sandbox import client

    starts, kills = _fake(monkeypatch, spares=3)
    baseline = client.Zygote(_spec(1024, trusted=True)).start()  # the eager baseline's, idle between timings
    client._give_back(baseline)
    client.start_spare(_spec(3072))
    _wait()
    client.start_spare(_spec(4096))  # before: 3 more started, each given back ended the oldest idle one
    _wait()
    assert baseline not in kills and baseline in client._IDLE
    assert not kills, f"{len(kills)} idle zygotes ended by spares ({len(starts)} started)"
    assert len(client._IDLE) <= 4


def test_marked_zygotes_make_way_for_spares_before_unmarked_ones(monkeypatch):
    from kstrata.sandbox import client

    starts, kills = _fake(monkeypatch, spares=1)
    baseline = client.Zygote(_spec(1024, trusted=True)).start()
    client._give_back(baseline)
    marked = []
    for name in "abc":  # three candidates' verifications: their zygotes marked, given back
        z = client.Zygote(_spec(4096)).start()
        z.hidden_of = name
        client._give_back(z)
        marked.append(z)
    # the list is full (4) of one unmarked and three marked: a spare may still start (room counts the unmarked)
    assert client.start_spare(_spec(4096)) == 1
    _wait()
    assert baseline in client._IDLE and marked[0] in kills  # the oldest marked one went, not the baseline
    assert client._unmarked_idle(_spec(4096).key()) == 1
