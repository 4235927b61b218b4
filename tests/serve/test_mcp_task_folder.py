"""``kstrata mcp --tasks DIR`` serves the tasks of a folder by the rule of
``tasks list --path`` and keeps stdout for the protocol (newcomer nc21:
list_tasks offered helper scripts as tasks, show_task ran one, a tool call for
one task answered with another file's error, and a task that prints when
imported wrote into the stdio JSON-RPC stream)."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp.types import LATEST_PROTOCOL_VERSION
from serve_candidates import HONEST_RELU

TINY = (Path(__file__).parent / "tasks" / "tiny_relu.py").read_text()
SCRIPT = ("import pathlib\n"
          "pathlib.Path(__file__).with_name('SIDE_EFFECT_RAN').write_text('ran')\n"
          "print('helper: generating report ...')\n")


def test_a_helper_script_in_the_folder_is_no_task_and_never_runs(tmp_path):
    from kstrata.serve.mcp_server import KernelServer
    from kstrata.serve.service import ServeError

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "tiny_relu.py").write_text(TINY)
    (tasks / "make_report.py").write_text(SCRIPT)
    (tasks / "use_export.py").write_text(SCRIPT + "from my_export import KernelModule\n")
    srv = KernelServer(tmp_path / "run", backend="pytorch", task_dir=tasks, time_candidates=False)
    try:
        assert [t["name"] for t in srv.list_tasks()["tasks"]] == ["tiny_relu"]
        for name in ("make_report", "use_export"):
            with pytest.raises(ServeError, match=f"unknown task '{name}'") as e:
                srv.show_task(task=name)
            assert "make_report.py" not in str(e.value)
            with pytest.raises(ServeError, match=f"unknown task '{name}'"):
                srv.evaluate_candidate(task=name, source="x")
        assert srv.show_task(task="tiny_relu")["name"] == "tiny_relu"
    finally:
        srv.close()
    assert not (tasks / "SIDE_EFFECT_RAN").exists()


def _send(proc: subprocess.Popen, message: dict) -> None:
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def test_a_task_that_prints_at_import_stays_off_the_stdio_stream(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "loud_relu.py").write_text("print('loud_relu task: loading')\n" + TINY)
    errfile = tmp_path / "stderr.txt"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from kstrata.cli.main import app; app()", "mcp", "--run", str(tmp_path / "run"),
         "--tasks", str(tasks), "--no-timing"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errfile.open("wb"),
        bufsize=0)  # unbuffered: select() sees every line, none waits in a reader buffer
    lines: list[bytes] = []
    try:
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
                                "clientInfo": {"name": "test", "version": "0"}}})
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        calls = [("show_task", {"task": "loud_relu"}),  # imports the task in kstrata's process
                 ("evaluate_candidate", {"task": "loud_relu", "source": HONEST_RELU}),  # and in workers
                 ("list_tasks", {})]
        for i, (tool, args) in enumerate(calls, start=2):
            _send(proc, {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                         "params": {"name": tool, "arguments": args}})
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:  # until the last call is answered
            if select.select([proc.stdout], [], [], 1)[0]:
                line = proc.stdout.readline()
                if not line:
                    break
                lines.append(line)
                if b'"id":4' in line.replace(b" ", b""):
                    break
        proc.stdin.close()  # the server stops; anything buffered would reach stdout now
        out = proc.stdout.read()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines += out.splitlines()
    err = errfile.read_bytes()
    bad = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith(b"{")]
    assert not bad, (bad, err.decode()[-2000:])
    answers = {m.get("id"): m for m in map(json.loads, filter(bytes.strip, lines))}
    assert all("result" in answers[i] for i in (2, 3, 4)), answers
    assert '"verdict": "correct"' in answers[3]["result"]["content"][0]["text"], answers[3]
    assert b"loud_relu task: loading" in err


GUARDED = """
import subprocess, sys
from kstrata.serve.stdout_guard import stdout_to_stderr
with stdout_to_stderr():
    print('a print while serving')
    subprocess.run([sys.executable, '-c', 'print("a child process started while serving")'], check=True)
    sys.stdout.buffer.write(b'{"jsonrpc": "2.0"}\\n')
    sys.stdout.buffer.flush()
print('after serving')
"""


def test_while_serving_stdio_only_the_protocol_reaches_stdout():
    """The worker processes the server starts, and kstrata's own prints, write to
    stderr; the protocol's stream is ``sys.stdout.buffer``, which the transport serves."""
    r = subprocess.run([sys.executable, "-c", GUARDED], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == '{"jsonrpc": "2.0"}\nafter serving\n', (r.stdout, r.stderr)
    assert "a print while serving" in r.stderr and "a child process started while serving" in r.stderr
