"""A candidate that sleeps, blocks or stops itself is ended long before the
verification's time limit, with a verdict that says so (kstrata.sandbox.stall)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from kstrata.sandbox import CandidateDied, CandidateProcess, status, wire
from kstrata.sandbox.client import fresh
from kstrata.sandbox.stall import STOPPED_S, StallWatch, stall_limit
from kstrata.tasks.loader import resolve_task

needs_sandbox = pytest.mark.skipif(not status().usable, reason="bubblewrap cannot run here")
KSTRATA = str(Path(sys.executable).with_name("kstrata"))


def _proc(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code])


def test_watch_tells_asleep_stopped_and_busy_apart():
    # the sleeper wakes 50 times a second (newcomer nc11: a time.sleep(1) loop gained a clock tick now and
    # then, and any tick counted as progress: it ran to the time limit)
    sleeper = _proc("import time\nwhile True: time.sleep(0.02)")
    spinner = _proc("while True: pass")
    try:
        time.sleep(0.5)  # both started; the spinner has used CPU time
        asleep = StallWatch(lambda: [sleeper.pid], limit_s=2.0)
        t0 = time.monotonic()
        assert asleep.check(t0) is None
        why = None
        while why is None and time.monotonic() - t0 < 30:
            time.sleep(0.5)
            why = asleep.check(time.monotonic())
        assert why is not None and "used almost no CPU time" in why, why
        assert 2.0 <= time.monotonic() - t0 < 10

        busy = StallWatch(lambda: [spinner.pid], limit_s=0.2)
        assert busy.check(0.0) is None
        time.sleep(0.5)
        assert busy.check(0.6) is None  # its CPU time moved: progress, however long it runs

        os.kill(spinner.pid, signal.SIGSTOP)
        time.sleep(0.2)
        stopped = StallWatch(lambda: [spinner.pid], limit_s=0)  # 0: no stall limit, stopped still counts
        assert stopped.check(0.0) is None
        why = stopped.check(STOPPED_S + 0.1)
        assert why is not None and "stopped (SIGSTOP" in why
        assert StallWatch(lambda: [], limit_s=1.0).check(99.0) is None  # nothing to read: no verdict
    finally:
        for p in (sleeper, spinner):
            p.kill()
            p.wait()


def test_stall_limit_from_the_environment(monkeypatch):
    for raw, want in (("", 120.0), ("7.5", 7.5), ("0", 0.0), ("-3", 120.0), ("nan", 120.0), ("x", 120.0)):
        monkeypatch.setenv("KSTRATA_CANDIDATE_STALL_S", raw)
        assert stall_limit() == want, raw


def _load_and_call(proc: CandidateProcess, body: str) -> None:
    task = resolve_task("relu")
    src = f"import os, signal, time, torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n{body}"
    h, _ = proc.request({"op": "load", "backend": "pytorch", "task": {
        "name": "relu", "path": str(task.path), "source": task.source, "meta": task.meta.model_dump(mode="json")},
        "sources": {"source": src}, "shape": task.small_shapes[0], "seed": 0, "init": []}, timeout_s=120)
    assert h.get("ok"), h
    bufs: list = []
    enc = wire.encode([torch.randn(4, 4)], bufs)
    proc.request({"op": "call", "inputs": enc}, bufs, timeout_s=300)


@needs_sandbox
@pytest.mark.parametrize("body, limit, words", [
    ("        while True:\n            time.sleep(1)\n", "4", "used almost no CPU time"),
    # stopped: ended within STOPPED_S whatever the stall limit
    ("        os.kill(os.getpid(), signal.SIGSTOP)\n", "200", "stopped (SIGSTOP"),
])
def test_a_candidate_that_sleeps_or_stops_itself_is_ended_early(monkeypatch, body, limit, words):
    monkeypatch.setenv("KSTRATA_CANDIDATE_STALL_S", limit)
    proc = fresh(CandidateProcess("pytorch", memory_mb=4096))
    try:
        t0 = time.monotonic()
        with pytest.raises(CandidateDied) as e:
            _load_and_call(proc, body)
        took = time.monotonic() - t0
    finally:
        proc.close()
    assert e.value.cause == "stall" and words in str(e.value)
    assert took < 120, took  # the call's limit was 300 s


@needs_sandbox
def test_eval_names_a_stalled_candidate(tmp_path):
    cand = tmp_path / "relu_sleeps.py"
    cand.write_text("import time, torch.nn as nn\nclass ModelNew(nn.Module):\n"
                    "    def forward(self, x):\n        while True:\n            time.sleep(1)\n")
    env = {**os.environ, "KSTRATA_CANDIDATE_STALL_S": "4"}
    t0 = time.monotonic()
    r = subprocess.run([KSTRATA, "eval", "relu", str(cand), "--no-time", "--scope", "small", "--json"],
                       capture_output=True, text=True, env=env, timeout=600)
    took = time.monotonic() - t0
    ev = json.loads(r.stdout)
    assert ev["verdict"] == "timeout" and ev["check"] == "stalled", ev
    assert "used almost no CPU time" in json.dumps(ev["evidence"])
    assert took < 300, took  # the default verification limit is 600 s
