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


_RELU = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"


@pytest.mark.parametrize("tool,args", [
    ("submit_candidate", {"task": "relu", "source": _RELU, "backend": ["pytorch"]}),
    ("evaluate_candidate", {"task": "relu", "source": _RELU, "backend": {"name": "pytorch"}}),
    ("show_task", {"task": "relu", "backend": ["pytorch"]}),
    ("submit_candidate", {"task": "relu", "source": _RELU, "level": ["source"]}),
    ("evaluate_candidate", {"task": "relu", "source": _RELU, "level": {"source": 1}}),
    ("submit_candidate", {"task": "relu", "source": _RELU, "parent": ["0123abcd"]}),
    ("get_best", {"task": ["relu"]}),
])
def test_an_mcp_argument_naming_something_that_is_no_text_gets_one_clear_error(tmp_path, tool, args):
    """An MCP client sends any JSON: ``submit_candidate(backend=[...])`` ended
    in ``TypeError: unhashable type: 'list'``, reported as an internal error of
    kstrata (red team rt62, left open), as did a list or object as ``level``;
    a list as ``parent`` read "'list' object has no attribute 'lower'", as
    ``task`` "task is empty". Each is a ServeError naming the argument, and
    nothing is evaluated or stored."""
    from kstrata.serve.mcp_server import KernelServer
    from kstrata.serve.service import ServeError

    srv = KernelServer(tmp_path / "run", backend="pytorch", time_candidates=False)
    try:
        name = next(k for k in ("backend", "level", "parent", "task") if not isinstance(args.get(k, ""), str))
        with pytest.raises(ServeError, match=f"^{name} must be a name given as text"):
            getattr(srv, tool)(**args)
        assert srv.store.candidates() == [] and srv.budget()["spent"]["evaluations"] == 0
    finally:
        srv.close()
