"""Red-team round rt65: what candidates, MCP clients and edited run folders
still reached (the kinds of ``cases/sandbox``), including the three kinds rt62
left open. Each test fails before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.sandbox import policy, status

CASES = Path(__file__).resolve().parent / "cases"

needs_sandbox = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


@needs_sandbox
def test_no_system_wide_proc_file_is_writable_in_the_sandbox(probe_eval):
    """``/proc/pressure/*`` (mode 0666) took a candidate's PSI trigger (red team
    rt62, left open). No file of the sandbox's ``/proc`` outside the processes'
    own folders may be opened for writing."""
    r = probe_eval(CASES / "rt65_proc_writable" / "candidate.py")
    assert r["writable"] == [], r
    assert r["psi_trigger"].startswith("ERR"), r


def test_the_command_line_binds_every_writable_proc_entry_read_only():
    """Each system-wide ``/proc`` entry holding a file with a write bit is bound
    read-only right after ``--proc`` (``/proc/sys`` first)."""
    cmd = policy.command(["true"], memory_mb=512)
    at = cmd.index("--proc")
    entries = policy._proc_writable_entries()
    binds = cmd[at + 2:at + 2 + 3 * len(entries)]
    assert binds == [a for p in entries for a in ("--ro-bind", p, p)], binds
    if Path("/proc/pressure").is_dir():
        assert "/proc/pressure" in entries, entries
