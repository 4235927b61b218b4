"""The worker environment: threads sized to the allowed CPUs, the caller's
PYTHONPATH kept after kstrata's, TVM kept off CPUs outside the allowed set."""

from __future__ import annotations

import os

import pytest

from kstrata.execute.pool import _kstrata_path, worker_env


def test_pythonpath_keeps_callers_entries_after_kstrata(monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{tmp_path}")
    parts = worker_env()["PYTHONPATH"].split(os.pathsep)
    assert parts[0] == _kstrata_path()
    assert parts.count(str(tmp_path)) == 1 and parts[-1] == str(tmp_path)
    monkeypatch.delenv("PYTHONPATH")
    assert str(tmp_path) not in worker_env()["PYTHONPATH"]


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs sched_getaffinity")
def test_threads_follow_the_allowed_cpus(monkeypatch):
    for var in ("TVM_NUM_THREADS", "OMP_NUM_THREADS", "TVM_BIND_THREADS"):
        monkeypatch.delenv(var, raising=False)
    host = os.cpu_count() or 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(host)))
    env = worker_env()
    assert env["TVM_NUM_THREADS"] == env["OMP_NUM_THREADS"] == str(host)
    assert "TVM_BIND_THREADS" not in env
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {host + 3})  # one CPU, not 0..n-1
    env = worker_env()
    assert env["TVM_NUM_THREADS"] == "1" and env["TVM_BIND_THREADS"] == "0"
