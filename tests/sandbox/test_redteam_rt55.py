"""Red-team round rt55: what the sandbox left reachable past its namespaces
(cases under ``cases/rt55_*``). Each test fails before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.sandbox import policy, status

CASES = Path(__file__).resolve().parent / "cases"

needs_sandbox = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


@pytest.fixture(scope="module")
def kernel_reach():
    """What ``cases/rt55_kernel_reach`` reached (one ``kstrata eval`` for its tests)."""
    import json
    import re
    import subprocess
    import sys

    kstrata = str(Path(sys.executable).with_name("kstrata"))
    p = subprocess.run([kstrata, "eval", "relu", str(CASES / "rt55_kernel_reach" / "candidate.py"), "--backend",
                        "pytorch", "--json", "--no-time", "--scope", "small", "--preset", "warn"],
                       capture_output=True, text=True, timeout=300, cwd=str(CASES.parents[2]))
    assert p.returncode == 0, p.stderr[-3000:]
    d = json.loads(p.stdout[p.stdout.index("{"):])
    m = re.search(r"PROBE(\{.*\})ENDPROBE", d["evidence"]["message"], re.S)
    assert m, d["evidence"]["message"][:2000]
    return json.loads(m.group(1))


@needs_sandbox
def test_a_candidate_gets_no_vsock_nor_other_unneeded_socket_families(kernel_reach):
    """vsock is not isolated by a network namespace: a candidate bound ports of
    the machine's hypervisor channel. Only UNIX, IPv4/IPv6 (its own loopback)
    and netlink sockets are made; the rest fail as unsupported (EAFNOSUPPORT)."""
    if policy.seccomp_program() is None:
        pytest.skip("seccomp filter is built for x86-64 only")
    r = kernel_reach
    assert r["vsock"] == "ERR OSError 97" and r["vsock_bind"] == "ERR OSError 97", r
    assert str(r["packet"]).startswith("ERR") and str(r["alg"]).startswith("ERR"), r
    for family in ("inet", "inet6", "unix", "unix_pair", "netlink"):
        assert r[family] == "made", (family, r)


def test_the_seccomp_program_refuses_families_by_the_first_argument():
    """The filter's own logic, run on sample system calls (no sandbox needed)."""
    import errno

    prog = policy.seccomp_program()
    if prog is None:
        pytest.skip("seccomp filter is built for x86-64 only")
    run = _bpf(prog)
    allow, refuse = 0x7FFF0000, 0x00050000
    assert run(41, 2) == allow and run(41, 1) == allow and run(41, 10) == allow and run(41, 16) == allow
    assert run(41, 40) == refuse | errno.EAFNOSUPPORT  # socket(AF_VSOCK)
    assert run(53, 40) == refuse | errno.EAFNOSUPPORT  # socketpair(AF_VSOCK)
    assert run(41, 40 | (1 << 32)) == refuse | errno.EAFNOSUPPORT  # the kernel reads an int
    assert run(101, 0) == refuse | errno.EPERM  # ptrace, as before
    assert run(0, 40) == allow  # read(40, ...): only socket calls look at their first argument


def test_the_seccomp_program_refuses_file_watches_and_makes_flock_a_no_op():
    """Red team rt68's lock/watch channel between sandboxes: inotify and fanotify
    fail with EPERM, flock returns 0 without locking; other calls as before."""
    import errno

    prog = policy.seccomp_program()
    if prog is None:
        pytest.skip("seccomp filter is built for x86-64 only")
    run = _bpf(prog)
    allow, refuse = 0x7FFF0000, 0x00050000
    for nr in (253, 254, 294, 300, 301):  # inotify_init, inotify_add_watch, inotify_init1, fanotify_*
        assert run(nr, 0) == refuse | errno.EPERM, nr
    assert run(73, 3) == refuse  # flock: SECCOMP_RET_ERRNO with errno 0, the call returns 0
    assert run(72, 3) == allow and run(101, 0) == refuse | errno.EPERM  # fcntl allowed, ptrace refused
    assert run(41, 40) == refuse | errno.EAFNOSUPPORT and run(41, 2) == allow  # the families as before
    assert run(0x40000000 | 73, 0) == refuse | errno.EPERM  # x32 numbers still refused


def _bpf(prog: bytes):
    """A tiny classic-BPF interpreter for the instructions seccomp_program uses."""
    import struct

    ins = [struct.unpack("<HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]

    def run(nr: int, arg0: int, arch: int = 0xC000003E, args: tuple = ()) -> int:
        """``args``: the arguments after ``arg0``."""
        data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, *(tuple(args) + (0,) * 5)[:5])
        a, pc = 0, 0
        while True:
            code, jt, jf, k = ins[pc]
            if code == 0x20:  # ld abs
                a = struct.unpack_from("<I", data, k)[0]
                pc += 1
            elif code == 0x15:  # jeq
                pc += 1 + (jt if a == k else jf)
            elif code == 0x35:  # jge
                pc += 1 + (jt if a >= k else jf)
            elif code == 0x45:  # jset
                pc += 1 + (jt if a & k else jf)
            elif code == 0x06:  # ret
                return k
            else:
                raise AssertionError(f"unexpected instruction {code:#x}")

    return run


@needs_sandbox
def test_proc_sys_is_read_only_and_still_the_sandboxs_own(kernel_reach):
    """bubblewrap leaves ``/proc/sys`` writable (its directory's mode hides it
    from bubblewrap's own check); where kstrata runs as root, the candidate's
    uid is the host's root, which is all the sysctl files check: it wrote
    global kernel settings. Read-only now, and what it reads is still its own
    namespaces' (the zygote reads ``ns_last_pid``)."""
    r = kernel_reach
    assert r["sysctl_write"] == "ERR OSError 30", r  # EROFS
    assert r["sysctl_core_pattern_writable"] is False, r
    assert r["sysctl_read"] is True and r["hostname"] == "kstrata-sandbox", r


def test_the_command_line_binds_proc_sys_read_only_after_proc():
    cmd = policy.command(["true"], memory_mb=512)
    at = cmd.index("--proc")
    assert cmd[at + 1] == "/proc"
    assert cmd[at + 2:at + 5] == ["--ro-bind", "/proc/sys", "/proc/sys"], cmd[at:at + 6]


def _binds(cmd: list[str]) -> set[str]:
    return {cmd[i + 1] for i, a in enumerate(cmd) if a in ("--ro-bind", "--bind")}


def test_a_home_on_pythonpath_or_as_the_prefix_is_not_bound(tmp_path, monkeypatch):
    """Only the literal ``/root`` and ``/home`` were kept out: a home on
    ``PYTHONPATH`` (or an interpreter installed with ``--prefix=$HOME``) was
    bound whole, and so was kstrata's cache folder above it."""
    home = tmp_path / "alice"
    (home / ".ssh").mkdir(parents=True)
    (home / "lib").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(home / ".cache" / "kstrata"))
    monkeypatch.setenv("PYTHONPATH", f"{home}{':'}{home / '.cache'}")
    monkeypatch.setattr(policy.sys, "prefix", str(home))
    got = _binds(policy.command(["true"]))
    assert not [b for b in got if str(home).startswith(b.rstrip("/") + "/") or b == str(home)
                or b == str(home / ".cache")], sorted(got)
    assert str(home / "lib") in got  # the prefix's own libraries still are
    import kstrata

    assert str(Path(kstrata.__file__).resolve().parents[1]) in got


@needs_sandbox
def test_a_candidate_cannot_read_a_home_that_is_on_pythonpath(tmp_path):
    import json
    import os
    import re
    import subprocess
    import sys

    home = tmp_path / "alice"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-RT55\n")
    cand = tmp_path / "candidate.py"
    cand.write_text((CASES / "rt55_home_on_pythonpath" / "candidate.py").read_text().replace("<home>", str(home)))
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(home),
           "KSTRATA_CACHE_DIR": os.environ.get("KSTRATA_CACHE_DIR") or str(Path.home() / ".cache" / "kstrata")}
    kstrata = str(Path(sys.executable).with_name("kstrata"))
    p = subprocess.run([kstrata, "eval", "relu", str(cand), "--backend", "pytorch", "--json", "--no-time",
                        "--scope", "small", "--preset", "warn"], capture_output=True, text=True, timeout=300,
                       cwd=str(tmp_path), env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    d = json.loads(p.stdout[p.stdout.index("{"):])
    m = re.search(r"PROBE(\{.*\})ENDPROBE", d["evidence"]["message"], re.S)
    assert m, d["evidence"]["message"][:2000]
    assert json.loads(m.group(1))["key"] == "ERR FileNotFoundError", m.group(1)


def test_the_timed_calls_the_judge_checks_cannot_be_predicted_from_the_load_request(monkeypatch):
    """Which timed calls the judge fetches and compares was drawn from
    ``random.Random(seed)``, the timing's seed, which the candidate's process
    is sent in its ``load`` request (0 by default): it knew every fetched call
    but the last ahead of time, and could do the work in those only."""
    import random

    from kstrata.backends.registry import get_backend
    from kstrata.measure import candidate as measure_candidate
    from kstrata.measure import remote
    from kstrata.sandbox import client
    from kstrata.tasks.loader import resolve_task

    class FakeProc:
        """A loaded candidate process that records what the judge sends."""

        def __init__(self):
            self.load: dict = {}
            self.fetched_after: list[int] = []
            self.calls = 0

        def request(self, h, bufs=(), *a, **k):
            self.load = dict(h)
            return {"ok": True}, []

        def ok(self, h, bufs=None):
            if h.get("op") == "fetch" and h.get("outputs", True):
                self.fetched_after.append(self.calls)
            return {"ok": True, "outputs": [], "inputs": [], "findings": []}, []

    proc = FakeProc()
    monkeypatch.setattr(client, "fresh", lambda spec, timeout_s=300.0: proc)
    task = resolve_task("relu")
    b = get_backend("pytorch")
    cand = measure_candidate._remote(task, b, b.initial_sources(task), task.nominal_shape, [], 0, [],
                                     check=lambda *a, **k: None)
    cand.uses, cand.seeds, cand.staged = [0], [[]], [[]]
    for _ in range(400):
        proc.calls += 1
        cand.after_call(0)
    # what the candidate's process predicts from its load request: call 1, then each call whose draw is low
    rng = random.Random(proc.load["seed"])
    predicted = [1] + [k for k in range(2, 401) if rng.random() < remote.CHECK_SHARE]
    assert len(proc.fetched_after) >= 10
    assert proc.fetched_after != predicted, "the checked calls follow the seed the candidate was sent"


def test_a_kernel_cache_archive_never_takes_the_disks_last_free_space(tmp_path, monkeypatch):
    """A candidate that passes its tests leaves what it likes under its cache
    folder (case: 60 MiB of random bytes, kept as a 60 MiB archive on the
    host); the folder's cap (4 GiB) did not look at the disk, so a run of such
    candidates filled one with less free. An archive that would leave less
    than the disk's reserve is not written."""
    import collections
    import os
    import shutil

    from kstrata.sandbox import kernel_cache

    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("KSTRATA_KERNEL_CACHE_MB", raising=False)
    root = tmp_path / "root"
    (root / "triton").mkdir(parents=True)
    (root / "triton" / "junk").write_bytes(os.urandom(4096))
    fd = os.memfd_create("archive")
    try:
        report = kernel_cache.pack(fd, str(root))
        key = kernel_cache.candidate_key("pytorch", {"source": "x"})
        usage = collections.namedtuple("usage", "total used free")
        total = 100 << 30
        tight = 64 << 20  # a 100 GiB disk with 64 MiB left: the 4 KiB archive fits, but in its last space
        monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(total, total - tight, tight))
        assert kernel_cache.store(key, fd, report) is False
        assert not kernel_cache.archive_path(key).exists()
        roomy = 50 << 30
        monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(total, total - roomy, roomy))
        assert kernel_cache.store(key, fd, report) is True and kernel_cache.archive_path(key).exists()
    finally:
        os.close(fd)


def _run_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "secret").write_text("a" * 64 + "\n")
    (path / "run.db").write_bytes(b"")
    return path


def test_a_run_inside_a_bound_folder_is_masked(tmp_path, monkeypatch):
    """A project on ``PYTHONPATH`` is bound for Python; its ``runs/r1`` (found
    by the bounded walk) and a run registered deeper than the walk goes
    (:func:`policy.keep_out`, as reading a run's secret does) are each hidden
    under an empty read-only tmpfs."""
    proj = tmp_path / "proj"
    near = _run_folder(proj / "runs" / "r1")
    deep = _run_folder(proj / "a" / "b" / "c" / "d" / "run")
    monkeypatch.setenv("PYTHONPATH", str(proj))
    monkeypatch.delenv(policy.RUN_DIRS_ENV, raising=False)
    policy.keep_out(deep)
    cmd = policy.command(["true"], memory_mb=512)
    assert str(proj) in _binds(cmd)
    for run in (near, deep):
        at = [i for i, a in enumerate(cmd) if a == "--tmpfs" and cmd[i + 1] == str(run)]
        assert at and cmd[at[0] + 2:at[0] + 4] == ["--remount-ro", str(run)], (run, cmd[-40:])


@needs_sandbox
def test_a_candidate_cannot_read_a_runs_secret_in_a_bound_folder(tmp_path):
    import json
    import os
    import re
    import subprocess
    import sys

    proj = tmp_path / "proj"
    _run_folder(proj / "runs" / "r1")
    env = {**os.environ, "PYTHONPATH": str(proj)}
    env.pop("KSTRATA_RUN_DIRS", None)
    kstrata = str(Path(sys.executable).with_name("kstrata"))
    p = subprocess.run([kstrata, "eval", "relu", str(CASES / "rt55_run_in_bound_dir" / "candidate.py"), "--backend",
                        "pytorch", "--json", "--no-time", "--scope", "small", "--preset", "warn"],
                       capture_output=True, text=True, timeout=300, cwd=str(tmp_path), env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    d = json.loads(p.stdout[p.stdout.index("{"):])
    m = re.search(r"PROBE(\{.*\})ENDPROBE", d["evidence"]["message"], re.S)
    assert m, d["evidence"]["message"][:2000]
    assert json.loads(m.group(1))["secrets"] == {}, m.group(1)


def test_the_seconds_of_a_hidden_stages_warm_loads_are_not_added(monkeypatch):
    """The judge times a stage's warm loads (TileLang: compiled ahead in
    parallel processes) and added their seconds to ``load_seconds`` at the
    hidden stage too: a candidate whose load spins for a time made of the
    hidden shape told it in the verdict, as the load seconds its process
    reported did before they were left out at hidden shapes."""
    import time

    from kstrata.verify import warm_loads

    class Proc:
        kernel_cache = "k"
        saw_hidden = False

        def request(self, header, bufs, timeout_s=None):
            time.sleep(0.2)  # "B * 10 ms" at the hidden shape
            return {"ok": True}, []

        def close(self):
            pass

    class Ctx:
        proc, deadline, load_seconds, backend = Proc(), None, 0.0, object()

        def fire_all(self, findings, public):
            pass

    monkeypatch.setattr(warm_loads, "wanted", lambda backend: True)
    monkeypatch.setattr(warm_loads, "procs", lambda n: 2)
    monkeypatch.setattr(warm_loads, "stage_loads", lambda ctx, tests: [({"op": "load"}, [])] * 2)
    ctx = Ctx()
    out = warm_loads.warm_stage(ctx, [object(), object()], False, lambda limit: Proc())
    assert out is not None and out["loads"] == 2
    assert ctx.load_seconds == 0.0, ctx.load_seconds
    pub = Ctx()
    warm_loads.warm_stage(pub, [object(), object()], True, lambda limit: Proc())
    assert pub.load_seconds >= 0.2  # a public stage's compile time still counts


@needs_sandbox
def test_a_timeout_on_a_hidden_test_tells_none_of_the_judges_seconds(tmp_path):
    import json
    import re
    import subprocess
    import sys

    kstrata = str(Path(sys.executable).with_name("kstrata"))
    p = subprocess.run([kstrata, "eval", "relu", str(CASES / "rt55_hidden_timeout" / "candidate.py"), "--backend",
                        "pytorch", "--json", "--no-time", "--scope", "small", "--timeout", "10"],
                       capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    d = json.loads(p.stdout[p.stdout.index("{"):])
    assert d["verdict"] == "timeout" and d["evidence"].get("stage") == "hidden", d["evidence"]
    assert not {"judge_s", "reference_s", "candidate_s"} & set(d["evidence"]), d["evidence"]
    assert not re.search(r"\d+\.\d", json.dumps(d["evidence"])), d["evidence"]
