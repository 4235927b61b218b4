"""The sandbox's ``/tmp`` and ``/dev/shm`` hold at most a share of the
candidate's memory limit (red-team round 3): files there are memory that
``RLIMIT_AS`` does not count, and each was half the machine's RAM, so
without a cgroup a candidate filling both could take more memory than the
machine has and the OOM killer would pick the judge."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kstrata.sandbox import policy, status

CASE = Path(__file__).resolve().parent / "cases" / "tmpfs_fill" / "candidate.py"


def test_the_command_sizes_both_tmpfs():
    args = policy.command(["true"], memory_mb=1024)
    if not policy._has_option(args[0], "--size"):
        pytest.skip("this bubblewrap has no --size")
    for mount in ("/tmp", "/dev/shm"):
        i = next(k for k in range(len(args) - 1) if args[k] == "--tmpfs" and args[k + 1] == mount)
        assert args[i - 2:i] == ["--size", str(256 << 20)], args


@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
def test_a_candidate_cannot_fill_tmp_past_its_share(monkeypatch):
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import run_protocol

    if not policy._has_option("bwrap", "--size"):
        pytest.skip("this bubblewrap has no --size")
    monkeypatch.setenv("KSTRATA_CANDIDATE_MEMORY_MB", "1024")
    ev = run_protocol(resolve_task("relu"), "pytorch", {"source": CASE.read_text()}, "5eed" * 4, preset="warn",
                      scope="small", timeout_s=120)
    message = ev["evidence"]["message"]
    got = {d: int(n) for d, n in re.findall(r"(/tmp|/dev/shm): (\d+) MiB", message)}
    assert got and all(n <= 256 for n in got.values()) and len(got) == 2, message


@pytest.mark.parametrize("value, expect", [("0", "default"), ("-5", "default"), ("lots", "default"),
                                           ("512", 512), ("99999999999", "cap")])
def test_the_memory_limit_setting_never_means_no_limit(monkeypatch, value, expect):
    """``KSTRATA_CANDIDATE_MEMORY_MB=0`` gave candidates no memory limit at all
    (no cgroup limit, no ``RLIMIT_AS``, unsized tmpfs), and a value above the
    machine's memory limited nothing (red-team round 3, bad options)."""
    import os

    from kstrata.sandbox.client import default_memory_mb

    total_mb = (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) >> 20
    monkeypatch.delenv("KSTRATA_CANDIDATE_MEMORY_MB", raising=False)
    default = default_memory_mb()
    monkeypatch.setenv("KSTRATA_CANDIDATE_MEMORY_MB", value)
    got = default_memory_mb()
    want = {"default": default, "cap": int(total_mb * 0.9)}.get(expect, expect)
    assert abs(got - want) <= 1 and 0 < got < total_mb
