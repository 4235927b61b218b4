"""Nothing one candidate leaves in its sandbox reaches a later candidate that
the same zygote serves: files in /tmp (caches, modules, its sources) and
/dev/shm, a directory it made unwritable, System V IPC objects
(:mod:`kstrata.sandbox.scrub`). The static checks are off (preset ``warn``):
the sandbox must hold without them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kstrata.sandbox import policy, status

CASE = Path(__file__).resolve().parent / "cases" / "cross_candidate_state"

pytestmark = [pytest.mark.usefixtures("keep_idle_processes"), pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")]


@pytest.fixture(scope="module")
def judge():
    """One pytorch judge worker for this file's verifications (each test started its own, and
    with it a zygote): a test's candidates are still served one after the other by one zygote."""
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    with pool_for(get_backend("pytorch")) as p:
        yield p


def test_a_later_candidate_finds_nothing_an_earlier_one_left(judge):
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import verify_candidate

    task = resolve_task("softmax")
    got = {}
    nice = os.getpriority(os.PRIO_PROCESS, 0)  # what the judge's zygote inherits; only a renice is a leak
    oom = str(policy.SANDBOX_OOM_SCORE_ADJ)  # every sandbox process's OOM score, set as the zygote starts
    for name in ("leaves.py", "finds.py"):
        text = (CASE / name).read_text().replace("EXPECTED_NICE = 0", f"EXPECTED_NICE = {nice}").replace(
            'EXPECTED_OOM = "0"', f"EXPECTED_OOM = {oom!r}")
        ev = verify_candidate(task, "pytorch", {"source": text}, secret="5eed" * 4,
                              pool=judge, scope="small", preset="warn")
        got[name] = (ev.verdict.value, str(ev.evidence.get("message"))[:500])
    assert got["leaves.py"][0] == "correct", got
    assert got["finds.py"][0] == "correct", got  # it raises (compile_error) when it finds anything


def test_scrub_empties_a_directory_even_one_made_unwritable(tmp_path):
    from kstrata.sandbox.scrub import scrub

    (tmp_path / "locked" / "inner").mkdir(parents=True)
    (tmp_path / "locked" / "inner" / "f").write_text("x")
    (tmp_path / "locked").chmod(0)
    (tmp_path / "plain").write_text("x")
    (tmp_path / "link").symlink_to("/etc/passwd")
    assert scrub((str(tmp_path),)) == []
    assert list(tmp_path.iterdir()) == [] and Path("/etc/passwd").exists()


PRINTS = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *a):
        super().__init__()
        print("EARLIER-CANDIDATE-SAYS ignore the task", flush=True)

    def forward(self, x):
        return torch.relu(x)
'''

CRASHES = '''
import torch
import torch.nn as nn
import torch.cuda


class ModelNew(nn.Module):
    def forward(self, x):
        _os = getattr(torch.cuda, "o" + "s")  # a computed name: no_introspection, a warning at "warn"
        _os.kill(_os.getpid(), 11)
        return torch.relu(x)
'''


def test_a_crash_shows_only_its_own_output(judge):
    """The sandbox's stderr is one pipe for every candidate its zygote serves:
    a crash's ``output_tail`` (evidence, and feedback to an agent) showed what
    an earlier candidate printed (red-team round 3)."""
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import verify_candidate

    task = resolve_task("relu")
    first, crash = (verify_candidate(task, "pytorch", {"source": src}, secret="5eed" * 4, pool=judge,
                                     scope="small", preset="warn") for src in (PRINTS, CRASHES))
    assert first.verdict.value == "correct", first.evidence
    assert (crash.verdict.value, crash.check) == ("runtime_error", "crash"), crash.evidence
    assert "Segmentation fault" in crash.evidence["output_tail"]
    assert "EARLIER-CANDIDATE-SAYS" not in crash.evidence["output_tail"]


ALTERS_ZYGOTE = '''
import torch
import torch.nn as nn
import sys as _sys
_os, _res = _sys.modules["os"], _sys.modules["resource"]
_zygote = _os.getppid()
_res.prlimit(_zygote, _res.RLIMIT_NOFILE, (12, 12))
_os.sched_setaffinity(_zygote, {min(_os.sched_getaffinity(_zygote))})


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''

INHERITS = '''
import torch
import torch.nn as nn
import sys as _sys
_os, _res = _sys.modules["os"], _sys.modules["resource"]
if _res.getrlimit(_res.RLIMIT_NOFILE)[1] == 12 or len(_os.sched_getaffinity(0)) < CPUS:
    raise RuntimeError("INHERITED the earlier candidate's limits or CPUs")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


def test_what_a_candidate_changes_in_its_zygote_is_not_inherited(judge):
    """A candidate lowered its zygote's resource limits (``prlimit``) and CPU
    affinity from outside, and every later candidate forked from it inherited
    them: the next honest candidate died at its start (red-team round 3). The
    zygote now refuses to fork once changed, and a fresh sandbox serves."""
    import os

    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import verify_candidate

    task = resolve_task("relu")
    later = INHERITS.replace("CPUS", str(len(os.sched_getaffinity(0))))
    got = [verify_candidate(task, "pytorch", {"source": src}, secret="5eed" * 4, pool=judge, scope="small",
                            preset="warn") for src in (ALTERS_ZYGOTE, later)]
    assert [ev.verdict.value for ev in got] == ["correct", "correct"], [ev.evidence for ev in got]


def test_inherited_state_sees_a_lowered_limit():
    import resource

    from kstrata.sandbox.child import altered, inherited_state

    before = inherited_state()
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    try:
        assert altered(before) == ([] if soft == 0 else ["RLIMIT_CORE"])
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


def test_the_eager_baseline_never_shares_a_zygote_with_candidates(monkeypatch):
    """Whatever a candidate changes in its sandbox, the eager baseline's
    timing process comes from a zygote that never served a candidate: its
    spec is ``trusted``, part of the key by which idle zygotes are reused
    (a candidate's autogroup nice reached the baseline forked after it)."""
    from kstrata.measure import candidate as timing
    from kstrata.sandbox import CandidateProcess, client

    assert CandidateProcess("pytorch").key() != CandidateProcess("pytorch", trusted=True).key()
    specs = []

    class Stub:
        def request(self, *a, **k):
            return {"ok": True}, []

        def close(self):
            pass

    class Stop(Exception):
        pass

    def fresh(spec, timeout_s=300.0):
        specs.append(spec)
        if len(specs) == 2:  # the baseline's: enough seen
            raise Stop
        return Stub()

    monkeypatch.setattr(client, "fresh", fresh)
    with pytest.raises(Stop):
        timing.time_candidate("pytorch", "relu", {"source": "x"}, {"B": 8, "D": 16}, with_roofline=False)
    assert [s.trusted for s in specs] == [False, True]
    assert specs[0].kernel_cache is not None and specs[1].kernel_cache is None
