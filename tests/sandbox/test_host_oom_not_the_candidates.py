"""A candidate process that the machine's OOM killer ended before its cgroup
reached its own limit is kstrata's failure, not the candidate's ``oom`` verdict
(newcomer nc27: the shipped rmsnorm read "exceeded the memory limit" on a hidden
test in a search beside other jobs, and was correct when verified again). The
kernel counts ``oom_kill`` in the victim's cgroup whichever OOM killer acted;
the cgroup's own limit shows in ``memory.events`` max/oom (v2) or
``memory.failcnt`` (v1)."""

from __future__ import annotations

import pytest

from kstrata.sandbox import CandidateDied, CandidateProcess
from kstrata.sandbox.policy import Cgroup, HostOutOfMemory
from kstrata.verify.runner import died


def _v2(tmp_path, events: str) -> Cgroup:
    (tmp_path / "memory.events").write_text(events)
    return Cgroup(dirs=[tmp_path], kind="v2")


def test_v2_an_oom_kill_without_the_limit_reached_is_the_machines(tmp_path):
    cg = _v2(tmp_path, "low 0\nhigh 0\nmax 0\noom 0\noom_kill 1\n")
    assert cg.oom_killed() and not cg.limit_reached()


def test_v2_the_limit_reached_is_the_candidates(tmp_path):
    cg = _v2(tmp_path, "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert cg.oom_killed() and cg.limit_reached()


def test_v1_failcnt_tells_the_limit_reached(tmp_path):
    (tmp_path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    (tmp_path / "memory.failcnt").write_text("0\n")
    cg = Cgroup(dirs=[tmp_path], kind="v1")
    assert cg.oom_killed() and not cg.limit_reached()
    (tmp_path / "memory.failcnt").write_text("12\n")
    assert cg.limit_reached()


@pytest.mark.parametrize("limit_hit, cause", [(False, "host_memory"), (True, "memory")])
def test_the_processes_death_names_whose_memory_it_was(limit_hit, cause):
    p = CandidateProcess("pytorch", memory_mb=2048, sandbox=True)
    p.zygote_oom, p.zygote_limit_hit = True, limit_hit
    e = p._died()
    assert e.cause == cause and ("2048 MiB" in str(e))


def test_a_host_oom_is_raised_as_the_judges_failure_public_or_hidden():
    p = CandidateProcess("pytorch", memory_mb=2048, sandbox=True)
    e = CandidateDied("host_memory", "the machine ran out of memory ...")
    for public in (True, False):
        with pytest.raises(HostOutOfMemory):
            died(e, p, public)


def test_the_candidates_own_limit_is_named_on_a_hidden_test():
    p = CandidateProcess("pytorch", memory_mb=2048, sandbox=True)
    stop = died(CandidateDied("memory", "the candidate exceeded the memory limit (2048 MiB); it held 1999 MiB"), p,
                False)
    assert "2048 MiB" in stop.evidence["message"] and "1999" not in stop.evidence["message"]
    assert stop.check == "oom"


def test_a_zygote_that_dies_quotes_only_the_last_forked_processes_output():
    """Red team rt85: a zygote's death quoted its stderr from byte 0, which held an earlier process's output
    (an earlier verification's hidden tests of the same candidate, whose zygote it may reuse), and that
    message reaches the caller as the sandbox's start failure."""
    import socket
    import threading

    from kstrata.sandbox.client import Zygote

    z = Zygote(CandidateProcess("pytorch", memory_mb=2048, sandbox=True))
    z._lock = getattr(z, "_lock", None) or threading.Lock()
    earlier = b"HIDDEN B=8191 D=4099\n"
    z._stderr += earlier
    z._written = len(earlier)
    z._last_mark = z._written  # mark() when the next process was forked
    z._stderr += b"ImportError: boom\n"
    z._written += len(b"ImportError: boom\n")
    z.sock, peer = socket.socketpair()
    peer.close()
    with pytest.raises(CandidateDied) as e:
        z._line(5.0)
    assert "ImportError: boom" in str(e.value) and "8191" not in str(e.value)


def test_v1_a_peak_at_the_limit_is_the_limit_reached_though_failcnt_stays_0(tmp_path):
    """This machine's v1 kernel kept memory.failcnt at 0 when its OOM killer acted at the limit; the
    peak (max_usage_in_bytes) equal to the limit tells it."""
    (tmp_path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    (tmp_path / "memory.failcnt").write_text("0\n")
    (tmp_path / "memory.limit_in_bytes").write_text("554074112\n")
    (tmp_path / "memory.max_usage_in_bytes").write_text("400000000\n")
    cg = Cgroup(dirs=[tmp_path], kind="v1")
    assert not cg.limit_reached()
    (tmp_path / "memory.max_usage_in_bytes").write_text("554074112\n")
    assert cg.limit_reached()
