"""The trust boundary's core: the wire format, the candidate process and its
sandbox, the refusal without one (issue #16)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kstrata.sandbox import CandidateDied, CandidateProcess, status, wire
from kstrata.sandbox.client import fresh
from kstrata.tasks.loader import resolve_task
from kstrata.verify import verify_candidate

pytestmark = pytest.mark.usefixtures("keep_idle_processes")

needs_sandbox = pytest.mark.skipif(not status().usable, reason="bubblewrap cannot run here")
KSTRATA = str(Path(sys.executable).with_name("kstrata"))


# -- wire format ---------------------------------------------------------------------
def test_wire_round_trip_keeps_values_types_and_alignment():
    bufs: list = []
    value = [torch.randn(3, 5), (torch.arange(4, dtype=torch.int32), None), 2.5, "x",
             {"k": torch.zeros(0, 2, dtype=torch.bfloat16)}]
    enc = wire.encode(value, bufs)
    json.dumps(enc)  # plain JSON: nothing executable crosses the boundary
    out = wire.decode(enc, bufs)
    assert torch.equal(out[0], value[0]) and out[0].data_ptr() % 64 == 0
    assert isinstance(out[1], tuple) and torch.equal(out[1][0], value[1][0]) and out[1][1] is None
    assert out[2:4] == [2.5, "x"] and out[4]["k"].shape == (0, 2) and out[4]["k"].dtype == torch.bfloat16


def test_wire_received_buffers_are_used_once_then_copied():
    """A buffer read off the pipe is decoded without a copy the first time; the
    same buffer decoded again (both poison-pattern calls of one test decode the
    same inputs) is a copy, so a candidate that writes into its inputs in one
    call cannot change what the next call receives."""
    x = torch.randn(1000)
    bufs: list = []
    enc = wire.encode([x], bufs, copy=False)
    assert isinstance(bufs[0], memoryview)       # the judge's inputs cross without a snapshot copy
    r, w = os.pipe()
    try:
        wire.send(w, {"x": enc}, bufs)
        h, got = wire.recv(r)
    finally:
        os.close(r)
        os.close(w)
    first, second = wire.decode(h["x"], got)[0], wire.decode(h["x"], got)[0]
    assert torch.equal(first, x) and torch.equal(second, x)
    assert first.data_ptr() == got[0].data_ptr() and first.data_ptr() % 64 == 0
    first.zero_()
    assert torch.equal(second, x) and second.data_ptr() != first.data_ptr()
    snap: list = []
    before = x.clone()
    wire.encode([x], snap)  # the default snapshots the bytes: a later in-place write does not travel
    x.add_(1.0)
    assert torch.equal(torch.frombuffer(bytearray(snap[0]), dtype=torch.float32), before)


@pytest.mark.parametrize("bad", [
    {"__tensor__": 0, "dtype": "float32", "shape": [3]},          # 12 bytes expected, 8 given
    {"__tensor__": 0, "dtype": "object", "shape": [1]},           # unknown dtype
    {"__tensor__": 5, "dtype": "float32", "shape": [2]},          # no such buffer
    {"__tensor__": 0, "dtype": "float32", "shape": [-2]},         # negative extent
])
def test_wire_rejects_malformed_tensors(bad):
    with pytest.raises(wire.WireError):
        wire.decode(bad, [b"\0" * 8])


def test_wire_refuses_objects_that_are_not_data():
    class Lazy(torch.Tensor):
        pass

    with pytest.raises(wire.WireError):
        wire.encode([object()], [])
    r, w = os.pipe()
    os.write(w, (10).to_bytes(8, "big") + b"not json!!")
    with pytest.raises(wire.WireError):
        wire.recv(r)
    os.close(r)
    os.close(w)


# -- the candidate process -----------------------------------------------------------
@pytest.fixture(scope="module")
def judge():
    """One judge worker for the verifications that need nothing of this process's
    environment (as ``kstrata optimize`` keeps one)."""
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    p = pool_for(get_backend("pytorch"))
    yield p
    p.close()


LEAK = '''
import torch, torch.nn as nn, typing
_os, _b, _s = getattr(torch, "o" + "s"), print.__self__, getattr(typing, "s" + "ys")  # computed: warnings
_mods = getattr(_s, "modules")
def _readable_secret():
    found = False
    for d in _os.listdir("/proc"):
        if d.isdigit():
            try:
                found = found or b"KSTRATA_TEST_SECRET" in _b.open("/proc/%s/environ" % d, "rb").read()
            except OSError:
                pass
    return found
INFO = {"judge_modules": [m for m in _mods if m.startswith(("kstrata.verify.runner", "kstrata.verify.plan",
        "kstrata.verify.tolerance", "kstrata.store", "kstrata.verify.domain"))],
        "uid": _os.getuid(), "key": _os.environ.get("KSTRATA_TEST_SECRET"),
        "parent_environ": _readable_secret(),
        "repo_visible": _os.path.exists(REPO),
        "pids": sorted(int(p) for p in _os.listdir("/proc") if p.isdigit())}
raise RuntimeError("INFO=" + repr(INFO))
'''


@needs_sandbox
def test_candidate_process_sees_no_judge_no_secret_no_host(monkeypatch, tmp_path):
    """The candidate's process imports none of the judge's modules, cannot
    read the parent's environment, runs unprivileged, sees only its own PID
    namespace and not the repository's other files."""
    monkeypatch.setenv("KSTRATA_TEST_SECRET", "sk-should-not-leak")
    repo_file = str(Path(__file__).resolve().parents[2] / "pyproject.toml")
    task = resolve_task("relu")
    ev = verify_candidate(task, "pytorch", {"source": LEAK.replace("REPO", repr(repo_file))}, secret="s" * 32,
                          scope="small", preset="warn")
    assert ev.verdict.value == "compile_error"
    info = ast.literal_eval(ev.evidence["message"].split("INFO=", 1)[1])
    assert info["judge_modules"] == []
    assert info["key"] is None and info["parent_environ"] is False
    assert info["uid"] != 0
    assert info["repo_visible"] is False
    # its own PID namespace: its init (1), the zygote, itself and at most a warmed spare, none of the
    # host's hundreds of processes (the PIDs themselves grow with a warm zygote's forks)
    assert 1 in info["pids"] and len(info["pids"]) <= 4, info["pids"]
    assert len([p for p in os.listdir("/proc") if p.isdigit()]) > 10  # the host has more


@needs_sandbox
def test_each_candidate_gets_its_own_process():
    """Spares are warmed ahead, but no process serves two candidates."""
    task = resolve_task("relu")
    spec = CandidateProcess("pytorch", memory_mb=4096)
    seen = []
    for _ in range(3):
        p = fresh(spec)
        h, _ = p.request({"op": "noop"})
        seen.append(p.pid)
        p.close()
    assert len(set(seen)) == 3
    assert task.name == "relu"


def test_idle_zygotes_are_capped_and_the_least_recently_used_ends(monkeypatch):
    """A process that meets many settings (a test session: a cache directory per
    test, several memory limits) kept one idle sandbox for each, about 25 of
    ~250 MB per xdist worker; now at most MAX_IDLE_ZYGOTES, the oldest ended."""
    from kstrata.sandbox import client

    class Fake:
        def __init__(self, key):
            self.spec, self.killed = type("S", (), {"key": lambda s, k=key: k})(), False

        def alive(self):
            return not self.killed

        def kill(self):
            self.killed = True

    monkeypatch.setattr(client, "_IDLE", [])
    zs = [Fake(("pytorch", mb)) for mb in range(client.MAX_IDLE_ZYGOTES + 2)]
    for z in zs:
        client._give_back(z)
    assert client._IDLE == zs[2:] and [z.killed for z in zs] == [True, True] + [False] * (len(zs) - 2)
    spec = CandidateProcess("pytorch", memory_mb=4096)
    monkeypatch.setattr(spec, "key", lambda: ("pytorch", 3))
    assert client._take_zygote(spec, 1.0) is zs[3] and zs[3] not in client._IDLE  # same settings: reused
    client.close_zygotes()
    assert client._IDLE == [] and all(z.killed for z in zs if z is not zs[3])


@needs_sandbox
def test_process_death_names_the_cause(judge):
    task = resolve_task("relu")
    kill = ("import torch, torch.nn as nn\n_os = getattr(torch, \"o\" + \"s\")\nclass ModelNew(nn.Module):\n"
            "    def forward(self, x):\n        _os.kill(_os.getpid(), 11)\n")
    ev = verify_candidate(task, "pytorch", {"source": kill}, secret="s" * 32, scope="small", preset="warn",
                          pool=judge)
    assert ev.verdict.value == "runtime_error" and ev.check == "crash"
    assert "SIGSEGV" in ev.evidence["message"]
    hang = ("import time, torch.nn as nn\nclass ModelNew(nn.Module):\n"
            "    def forward(self, x):\n        time.sleep(3600)\n")
    proc = fresh(CandidateProcess("pytorch", memory_mb=4096))
    try:
        with pytest.raises(CandidateDied) as e:
            proc.request({"op": "json_call", "target": "kstrata.backends.registry:names"}, timeout_s=60)
            proc.request({"op": "load", "backend": "pytorch", "task": {
                "name": "relu", "path": str(task.path), "source": task.source,
                "meta": task.meta.model_dump(mode="json")}, "sources": {"source": hang},
                "shape": task.small_shapes[0], "seed": 0, "init": []}, timeout_s=60)
            bufs: list = []
            enc = wire.encode([torch.randn(4, 4)], bufs)
            proc.request({"op": "call", "inputs": enc}, bufs, timeout_s=2)
        assert e.value.cause == "timeout"
    finally:
        proc.close()


def test_without_a_sandbox_untrusted_code_is_refused_unless_unsafe(tmp_path):
    """No bubblewrap: eval refuses (rc 2, one message naming --unsafe-no-sandbox);
    with the flag it runs."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    cand = tmp_path / "relu.py"
    cand.write_text("import torch, torch.nn as nn\nclass ModelNew(nn.Module):\n"
                    "    def forward(self, x):\n        return torch.relu(x)\n")
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    r = subprocess.run([KSTRATA, "eval", "relu", str(cand), "--no-time", "--scope", "small"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 2, r.stderr
    assert "--unsafe-no-sandbox" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([KSTRATA, "--unsafe-no-sandbox", "eval", "relu", str(cand), "--no-time", "--scope",
                        "small", "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdict"] == "correct"


SECCOMP = '''
import torch, torch.nn as nn, importlib
ct = importlib.import_module("ctypes")
libc = ct.CDLL(None, use_errno=True)
R = {}
for name, call in (("ptrace", lambda: libc.ptrace(0, 0, 0, 0)), ("setns", lambda: libc.setns(0, 0)),
                   ("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))):
    R[name] = (call(), ct.get_errno())
raise RuntimeError("R=" + repr(R))
'''


@needs_sandbox
def test_seccomp_refuses_escape_system_calls(judge):
    """ptrace (even PTRACE_TRACEME, which needs no privilege), setns and mount fail with EPERM."""
    from kstrata.sandbox.policy import seccomp_program

    if seccomp_program() is None:
        pytest.skip("seccomp filter is built for x86-64 only")
    ev = verify_candidate(resolve_task("relu"), "pytorch", {"source": SECCOMP}, secret="s" * 32, scope="small",
                          preset="warn", pool=judge)
    r = ast.literal_eval(ev.evidence["message"].split("R=", 1)[1])
    assert r == {"ptrace": (-1, 1), "setns": (-1, 1), "mount": (-1, 1)}


@needs_sandbox
def test_gpu_process_without_cgroup_is_held_to_its_memory_limit(monkeypatch):
    """Case 13 on a GPU machine without cgroups: RLIMIT_AS cannot hold a CUDA
    process, so the judge watches the candidate tree's resident memory and
    kills it above the limit (cause ``memory``, not a crash)."""
    from kstrata.sandbox import policy

    monkeypatch.setattr(policy.Cgroup, "create", classmethod(lambda cls, limit: None))
    task = resolve_task("relu")
    grow = ("import torch, torch.nn as nn\n_keep = []\nclass ModelNew(nn.Module):\n"
            "    def forward(self, x):\n"
            "        for _ in range(40):\n"
            "            _keep.append(torch.ones(64 << 20, dtype=torch.uint8))\n"
            "        return torch.relu(x)\n")
    spec = CandidateProcess("pytorch", memory_mb=1024, gpu=True)
    proc = fresh(spec)
    try:
        assert proc.watch_rss
        h, _ = proc.request({"op": "load", "backend": "pytorch", "task": {
            "name": "relu", "path": str(task.path), "source": task.source,
            "meta": task.meta.model_dump(mode="json")}, "sources": {"source": grow},
            "shape": task.small_shapes[0], "seed": 0, "init": []}, timeout_s=120)
        assert h.get("ok"), h
        bufs: list = []
        enc = wire.encode([torch.randn(4, 4)], bufs)
        with pytest.raises(CandidateDied) as e:
            proc.request({"op": "call", "inputs": enc}, bufs, timeout_s=120)
        assert e.value.cause == "memory" and "1024 MiB" in str(e.value)
        assert proc.rss_killed > 1024 << 20
    finally:
        proc.close()
