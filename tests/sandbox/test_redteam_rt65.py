"""Red-team round rt65: what candidates, MCP clients and edited run folders
still reached (the kinds of ``cases/sandbox``), including the three kinds rt62
left open. Each test fails before its fix."""

from __future__ import annotations

import re
import subprocess
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


def _run_with_config(run: Path, config) -> None:
    """A run folder whose run.db holds ``config`` as the run's config (as a hand edit leaves it)."""
    import json
    import sqlite3

    from kstrata.store.run_store import RunStore

    RunStore.create(run, {"task": {"name": "relu", "digest": "0" * 64, "path": ""}, "backend": "tvm-llvm"}).close()
    with sqlite3.connect(run / "run.db") as c:
        c.execute("UPDATE run SET config_json = ?", (json.dumps(config),))
    c.close()


_GOOD = {"task": {"name": "relu", "digest": "0" * 64, "path": ""}, "backend": "tvm-llvm", "proposer": "builtin",
         "budget": {"evaluations": 2}, "cli": {"baselines": ["eager"], "proposer": "builtin", "llm": None,
                                               "timing_shape": {"B": 64, "D": 64}}}


def _edited(path: str, value):
    import copy

    config = copy.deepcopy(_GOOD)
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node[key]
    node[last] = value
    return config


@pytest.mark.parametrize("config,says", [
    (_edited("budget", "abc"), "budget as text"),
    (_edited("budget.evaluations", "abc"), "budget.evaluations 'abc'"),
    (_edited("budget.evaluations", -5), "budget.evaluations '-5'"),
    (_edited("budget.bogus", 1), "budget.bogus (no such limit"),
    (_edited("cli", [1]), "cli as a JSON list"),
    (_edited("cli.baselines", 5), "cli.baselines as a number"),
    (_edited("cli.timing_shape", [1, 2]), "cli.timing_shape as a JSON list"),
    (_edited("cli.timing_shape", "abc"), "cli.timing_shape as text that is not JSON"),
    (_edited("cli.timing_shape", {"B": "x", "D": 3}), "cli.timing_shape.B 'x'"),
    ([_GOOD], "config is a JSON list"),
    (None, "config is null"),
])
def test_a_hand_edited_run_config_of_the_wrong_kind_gets_one_clear_error_on_resume(tmp_path, config, says):
    """A run's config (run.db, mirrored in config.json) is a file anyone can
    edit: ``"budget": "abc"``, a ``timing_shape`` list, a JSON list for the
    whole config ended ``kstrata optimize --resume`` (and ``kstrata tree``) in
    an ``AttributeError``/``ValueError``/``TypeError``/``JSONDecodeError``
    traceback; a negative limit was taken (red team rt62, left open). Each is
    ``RUN/run.db is damaged: ...`` (exit 2) naming the entry, and nothing in
    the run folder is written."""
    import hashlib
    import subprocess
    import sys

    run = tmp_path / "run"
    _run_with_config(run, config)
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in run.iterdir() if p.is_file()}
    kstrata = str(Path(sys.executable).with_name("kstrata"))
    for args in (["optimize", "relu", "--backend", "tvm-llvm", "--resume", str(run)], ["tree", str(run)]):
        p = subprocess.run([kstrata, *args], capture_output=True, text=True, timeout=300)
        out = p.stdout + p.stderr
        assert p.returncode == 2 and "Traceback" not in out, (args, out[-3000:])
        assert "run.db is damaged" in out and says in " ".join(out.split()), (args, out[-3000:])
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in run.iterdir() if p.is_file()}
    assert after == before


def test_a_stored_timing_shape_naming_no_size_of_the_task_is_refused_on_resume(tmp_path):
    """``cli.timing_shape`` ``{"Q": 4}`` for relu (sizes B, D) was taken on
    resume: the run went on timing at a shape of no size the task has."""
    from kstrata.cli.optimize import _timing_shape
    from kstrata.store.run_store import StoreError
    from kstrata.tasks.loader import resolve_task

    run = tmp_path / "run"
    _run_with_config(run, _edited("cli.timing_shape", {"Q": 4}))
    with pytest.raises(StoreError, match="is damaged: its timing shape does not fit the task .*'Q'"):
        _timing_shape("auto", resolve_task("relu"), None, run)


def _kstrata_capped(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``kstrata ARGS`` with its address space capped at 3 GB (what a larger file read whole exceeds)."""
    import resource
    import sys

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run([str(Path(sys.executable).with_name("kstrata")), *args], capture_output=True, text=True,
                          timeout=300, cwd=str(cwd), preexec_fn=cap)


@pytest.mark.parametrize("what", ["candidate", "task", "task folder", "initial", "cassette", "memory import"])
def test_a_source_file_larger_than_memory_is_refused_without_reading_it_whole(tmp_path, what):
    """``kstrata eval`` read a candidate or task file whole before anything
    looked at its length: a 4 GB file ended in a ``MemoryError`` traceback
    (here under a 3 GB cap; without one, a file larger than the machine's
    memory takes all of it), and so did ``tasks list --path`` over a folder
    holding one. No source may be longer than ``pysyntax.MAX_SOURCE_CHARS``:
    one clear error naming the file (exit 2), or the folder's file skipped."""
    big = tmp_path / "folder" / ("big.json" if what in ("initial", "cassette", "memory import") else "big.py")
    big.parent.mkdir()
    with open(big, "wb") as f:
        f.truncate(4 << 30)  # sparse: no disk used
    honest = tmp_path / "honest.py"
    honest.write_text(_RELU)
    args = {"candidate": ["eval", "relu", str(big), "--backend", "pytorch", "--no-time"],
            "task": ["eval", str(big), str(honest), "--backend", "pytorch", "--no-time"],
            "task folder": ["tasks", "list", "--path", str(big.parent)],
            "initial": ["optimize", "relu", "--backend", "tvm-llvm", "--initial", str(big), "--out", "run"],
            "cassette": ["optimize", "relu", "--backend", "tvm-llvm", "--proposer", "llm", "--llm", f"replay:{big}",
                         "--budget", "evals=1", "--out", "run"],
            "memory import": ["memory", "import", str(big), "--db", str(tmp_path / "memory.db")]}[what]
    p = _kstrata_capped(args, tmp_path)
    out = p.stdout + p.stderr
    assert "Traceback" not in out and "MemoryError" not in out, out[-3000:]
    assert re.search(r"over \d+ characters", " ".join(out.split())) and str(big) in out, out[-3000:]
    assert p.returncode == (0 if what == "task folder" else 2), out[-3000:]
    assert not (tmp_path / "run").exists()


def test_an_mcp_submission_longer_than_any_source_is_refused_before_it_is_stored(tmp_path):
    """submit_candidate stored the source in run.db and the run folder before
    verifying it, whatever its length: a client sending 100 MB a call filled
    the run's disk (no kernel is longer than ``pysyntax.MAX_SOURCE_CHARS``,
    which the verifier refuses anyway). Refused with a ServeError, nothing stored."""
    from kstrata.pysyntax import MAX_SOURCE_CHARS
    from kstrata.serve.mcp_server import KernelServer
    from kstrata.serve.service import ServeError

    srv = KernelServer(tmp_path / "run", backend="pytorch", time_candidates=False)
    try:
        before = (tmp_path / "run" / "run.db").stat().st_size
        with pytest.raises(ServeError, match=f"over the {MAX_SOURCE_CHARS} a source may have"):
            srv.submit_candidate(task="relu", source=_RELU + "#" * MAX_SOURCE_CHARS)
        assert srv.store.candidates() == [] and not (tmp_path / "run" / "candidates").exists()
        assert (tmp_path / "run" / "run.db").stat().st_size < before + MAX_SOURCE_CHARS
    finally:
        srv.close()


def test_an_mcp_call_s_long_arguments_are_recorded_clipped(tmp_path):
    """Every tool call's arguments were stored whole in ``proposer_calls``
    (refused calls too), and a submission's rationale with its candidate: a
    client sending a 100 MB rationale or source a call filled the run's disk.
    Each text is kept to ``mcp_server.RECORDED_CHARS`` (4096) there, its length noted."""
    from kstrata.serve.mcp_server import KernelServer

    srv = KernelServer(tmp_path / "run", backend="pytorch", time_candidates=False)
    try:
        huge = "#" * 5_000_000
        srv.record("submit_candidate", {"task": "relu", "source": huge, "rationale": huge}, None, "refused", 0.0)
        (row,) = srv.store.proposer_calls()
        assert len(row["prompt"]) < 20_000 and "5000000 characters in all" in row["prompt"], len(row["prompt"])
        out = srv.submit_candidate(task="relu", source="import torch\nclass ModelNew(torch.nn.Module):\n    def "
                                   "forward(self, x):\n        return x\n", rationale=huge)
        (cand,) = srv.store.candidates()
        assert cand.hash == out["candidate"] and len(cand.rationale) < 10_000, len(cand.rationale)
    finally:
        srv.close()
