"""Red-team round rt71 (sandbox kinds): each test fails before its fix."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.sandbox import policy, status
from test_redteam_rt55 import _bpf

CASES = Path(__file__).resolve().parent / "cases"
REPO = Path(__file__).resolve().parents[2]

sandboxed = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def test_the_seccomp_program_refuses_widening_the_affinity_where_kstrata_has_some_cpus(monkeypatch):
    """sched_setaffinity (203) fails with EPERM where this process may use only
    some of the host's CPUs, and stays allowed where it has them all (TVM pins
    its pool there); the other rules are unchanged."""
    import kstrata.execute.cpus as cpus

    if policy.seccomp_program(deny_affinity=False) is None:
        pytest.skip("seccomp filter is built for x86-64 only")
    allow, refuse = 0x7FFF0000, 0x00050000
    narrow, wide = _bpf(policy.seccomp_program(deny_affinity=True)), _bpf(policy.seccomp_program(deny_affinity=False))
    assert narrow(203, 0) == refuse | errno.EPERM
    assert wide(203, 0) == allow
    for run in (narrow, wide):
        assert run(204, 0) == allow  # sched_getaffinity
        assert run(101, 0) == refuse | errno.EPERM and run(73, 0) == refuse  # ptrace refused, flock a no-op
        assert run(41, 40) == refuse | errno.EAFNOSUPPORT and run(41, 2) == allow
    n = os.cpu_count() or 1
    monkeypatch.setattr(cpus, "allowed_cpus", lambda: set(range(n)))
    assert not policy.affinity_narrowed() and _bpf(policy.seccomp_program())(203, 0) == allow
    monkeypatch.setattr(cpus, "allowed_cpus", lambda: {0})
    assert policy.affinity_narrowed() == (n > 1)
    if n > 1:
        assert _bpf(policy.seccomp_program())(203, 0) == refuse | errno.EPERM


@sandboxed
@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not hasattr(os, "sched_setaffinity"), reason="needs 2 CPUs")
def test_a_candidate_cannot_take_cpus_kstrata_was_not_given():
    """kstrata run under ``taskset -c 0``: the candidate widened its own affinity
    to every CPU of the host and ran as many intra-op threads, while the
    baseline ran on the one CPU kstrata had (case cases/rt71_cpu_affinity:
    'widened: before [0] after [0, 1] threads 2'). The widening now fails."""
    case = CASES / "rt71_cpu_affinity" / "candidate.py"
    p = subprocess.run([sys.executable, "-m", "kstrata", "eval", "relu", str(case), "--backend", "pytorch",
                        "--json", "--no-time", "--scope", "small", "--preset", "warn"],
                       capture_output=True, text=True, timeout=300, cwd=str(REPO),
                       preexec_fn=lambda: os.sched_setaffinity(0, {0}))
    assert p.returncode == 0, p.stderr[-3000:]
    d = json.loads(p.stdout[p.stdout.index("{"):])
    message = str(d["evidence"]["message"])
    assert "rt71-affinity refused" in message, message[:1000]
    assert "after [0] threads 1" in message, message[:1000]


@pytest.mark.parametrize("name, item", [("task_numpy_input.py", "get_inputs() item 0 is a numpy.ndarray"),
                                        ("task_numpy_init_input.py", "get_init_inputs() item 0 is a numpy.float32")])
def test_a_task_input_that_cannot_cross_to_the_candidate_is_a_task_error(name, item):
    """Case 16's kind: a numpy array from get_inputs(), or a numpy number from
    get_init_inputs(), reached the wire to the candidate process and ended
    ``kstrata eval`` in a WireError traceback ("a numpy.ndarray cannot cross
    the boundary", exit 1). The task's check names the item."""
    from kstrata.tasks.errors import TaskError
    from kstrata.tasks.loader import check_reference_at, load_task

    with pytest.raises(TaskError, match=re.escape(item)):
        check_reference_at(load_task(CASES / "rt71_task_numpy_inputs" / name), None)


def test_eval_of_a_task_with_a_numpy_input_is_one_clear_error():
    case = CASES / "rt71_task_numpy_inputs"
    p = subprocess.run([sys.executable, "-m", "kstrata", "eval", str(case / "task_numpy_input.py"),
                        str(case / "candidate.py"), "--backend", "pytorch", "--no-time", "--scope", "small"],
                       capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-3000:]
    assert "get_inputs() item 0 is a numpy.ndarray" in p.stderr, p.stderr[-3000:]


@pytest.mark.parametrize("command", [["optimize", "relu", "--backend", "triton-interp"],
                                     ["bench", "--backends", "triton-interp", "--tasks", "relu"]])
@pytest.mark.parametrize("seed", ["99999999999999999999999", "-99999999999999999999999"])
def test_a_seed_a_run_cannot_record_is_one_clear_error_and_makes_no_folder(tmp_path, command, seed):
    """Case 17's kind: ``optimize --seed 99999999999999999999999`` ended in an
    OverflowError traceback ('Python int too large to convert to SQLite
    INTEGER', exit 1) and left a run folder with a lock and a secret but no
    run.db. The seed is checked with the other options."""
    out = tmp_path / "run"
    p = subprocess.run([sys.executable, "-m", "kstrata", *command, "--seed", seed, "--out", str(out)],
                       capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-3000:]
    assert f"--seed {seed}: must be a whole number" in p.stderr, p.stderr[-3000:]
    assert not out.exists()


def test_without_a_cgroup_the_seccomp_program_refuses_memory_no_address_space_counts():
    if policy.seccomp_program() is None:
        pytest.skip("seccomp filter is built for x86-64 only")
    allow, refuse = 0x7FFF0000, 0x00050000
    held, bare = _bpf(policy.seccomp_program(uncounted_memory=False)), _bpf(policy.seccomp_program(uncounted_memory=True))
    for nr in (319, 29):  # memfd_create, shmget
        assert held(nr, 0) == allow and bare(nr, 0) == refuse | errno.EPERM, nr
    assert bare(9, 0) == allow and bare(30, 0) == allow  # mmap; shmat of nothing gets nothing


@sandboxed
def test_a_memfd_cannot_hold_memory_past_the_limit_of_a_sandbox_without_a_cgroup(monkeypatch):
    """Case 13's kind where kstrata cannot make cgroups (RLIMIT_AS alone): a
    candidate wrote 1536 MiB into a memfd under a 512 MiB limit (no address
    space counts an unmapped memfd; the same for a System V segment once
    detached). memfd_create and shmget now fail there (case
    cases/rt71_memfd_uncounted)."""
    import torch

    from kstrata.sandbox import CandidateDied, CandidateProcess, wire
    from kstrata.sandbox.client import fresh
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import task_record

    monkeypatch.setattr(policy.Cgroup, "create", classmethod(lambda cls, limit, *a, **k: None))
    task = resolve_task("relu")
    source = (CASES / "rt71_memfd_uncounted" / "candidate.py").read_text()
    proc = fresh(CandidateProcess("pytorch", memory_mb=512))
    try:
        assert proc.zygote is not None and proc.zygote.cgroup is None
        h, _ = proc.request({"op": "load", "backend": "pytorch", "task": task_record(task), "sources": {"source": source},
                             "shape": task.small_shapes[0], "seed": 0, "init": []}, timeout_s=120)
        assert h.get("ok"), h
        bufs: list = []
        enc = wire.encode([torch.randn(4, 4)], bufs)
        try:
            h, _ = proc.request({"op": "call", "inputs": enc}, bufs, timeout_s=120)
        except CandidateDied as e:  # killed some other way: the memory was not held either
            h = {"message": str(e)}
    finally:
        proc.close()
    assert "holds" not in str(h.get("message")), h
    assert "Operation not permitted" in str(h.get("message")), h
