"""What a sandbox shares with the candidates that come after in it: only
``/tmp`` and ``/dev/shm``, which its zygote empties after each
(:mod:`kstrata.sandbox.scrub`). ``/dev`` is read-only and ``/sys/fs`` (the
host's cgroup trees) hidden (:data:`kstrata.sandbox.policy.MASKED_DIRS`);
case ``dev_and_sysfs`` (red-team round of 2026-12-04)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.sandbox import policy, status

CASE = Path(__file__).resolve().parent / "cases" / "dev_and_sysfs"

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def test_dev_is_read_only_and_the_cgroup_trees_are_hidden(probe_eval):
    r = probe_eval(CASE / "candidate.py")
    for key in ("dev_file", "dev_dir", "dev_fd_link", "dev_stdout_link"):
        assert str(r[key]).startswith("ERR"), (key, r)
    assert r["dev_shm_file"] == "written" and r["dev_null_write"] == "written", r
    assert r["sys_fs"] == [] and r["cgroups"] == [], r
    assert r["cpu_topology"] is True, r  # the rest of /sys: what torch and the flusher read


def test_the_command_line_masks_sys_fs_read_only():
    cmd = policy.command(["true"], memory_mb=512)
    i = cmd.index("--remount-ro")
    tail = cmd[i:cmd.index("--clearenv")]
    assert tail[:4] == ["--remount-ro", "/", "--remount-ro", "/dev"], tail
    if Path("/sys/fs").is_dir():
        assert tail[4:] == ["--tmpfs", "/sys/fs", "--remount-ro", "/sys/fs"], tail
