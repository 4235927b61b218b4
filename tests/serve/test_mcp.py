"""Drive ``kstrata mcp`` with the official ``mcp`` client: stdio and streamable HTTP."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from serve_candidates import CALLS_REFERENCE, DOES_NOT_BUILD, HONEST_RELU

TASKS = Path(__file__).parent / "tasks"
TOOLS = {"list_tasks", "show_task", "evaluate_candidate", "profile_candidate",
         "submit_candidate", "get_best", "budget_left"}


def _argv(run_dir: Path, *extra: str) -> list[str]:
    return ["-c", "from kstrata.cli.main import app; app()", "mcp", "--run", str(run_dir),
            "--tasks", str(TASKS), "--timing-reps", "20", *extra]


def _data(result) -> dict:
    assert not result.is_error, result.content[0].text
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def _stdio_session(run_dir: Path, extra: tuple[str, ...], body) -> None:
    params = StdioServerParameters(command=sys.executable, args=_argv(run_dir, *extra))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await body(session)


def test_stdio_every_tool(tmp_path):
    run_dir = tmp_path / "run"
    seen: dict = {}

    async def body(s: ClientSession) -> None:
        tools = {t.name for t in (await s.list_tools()).tools}
        assert TOOLS <= tools

        listed = _data(await s.call_tool("list_tasks", {}))
        assert [t["name"] for t in listed["tasks"]] == ["tiny_relu"]

        shown = _data(await s.call_tool("show_task", {"task": "tiny_relu"}))
        assert "class Model" in shown["reference_source"]
        assert "sweep" not in shown["reference_source"] and "129" not in json.dumps(shown)
        assert shown["public_shapes"][0]["shape"] == {"B": 4, "D": 33}
        assert shown["nominal"]["bytes"] == 4 * 2 * 64 * 256 and shown["dtype"] == "float32"

        ev = _data(await s.call_tool("evaluate_candidate", {"task": "tiny_relu", "source": HONEST_RELU}))
        assert ev["verdict"] == "correct" and ev["n_hidden"] > 0
        assert ev["timing"]["speedup"] > 0 and ev["timing"]["roofline_fraction"] > 0

        prof = _data(await s.call_tool("profile_candidate", {"task": "tiny_relu", "source": HONEST_RELU}))
        assert prof["verdict"] == "correct" and prof["profile"]["roofline"]["ceilings"]

        hack = _data(await s.call_tool("evaluate_candidate", {"task": "tiny_relu", "source": CALLS_REFERENCE}))
        assert hack["verdict"] == "rejected" and hack["check"]

        root = _data(await s.call_tool("submit_candidate", {"task": "tiny_relu", "source": HONEST_RELU,
                                                            "rationale": "clamp"}))
        assert root["verdict"] == "correct" and not root["duplicate"]
        child_src = HONEST_RELU.replace("torch.clamp_min(x, 0.0)", "torch.relu(x)")
        child = _data(await s.call_tool("submit_candidate", {
            "task": "tiny_relu", "source": child_src, "parent": root["candidate"][:10]}))
        assert child["parent"] == root["candidate"]
        again = _data(await s.call_tool("submit_candidate", {"task": "tiny_relu", "source": child_src}))
        assert again["duplicate"]

        best = _data(await s.call_tool("get_best", {"task": "tiny_relu"}))
        assert best["best"]["candidate"] in {root["candidate"], child["candidate"]}
        assert best["lineage"][-1]["candidate"] == root["candidate"]
        assert "ModelNew" in best["best"]["sources"]["source"]

        # bad input: one clear message each, the server stays up
        for args, needle in [({"task": "no_such_task", "source": HONEST_RELU}, "unknown task"),
                             ({"task": "tiny_relu", "source": "  "}, "empty"),
                             ({"task": "tiny_relu", "source": HONEST_RELU, "backend": "nope"}, "unknown backend")]:
            r = await s.call_tool("evaluate_candidate", args)
            assert r.is_error and needle in r.content[0].text
        bad = _data(await s.call_tool("evaluate_candidate", {"task": "tiny_relu", "source": DOES_NOT_BUILD}))
        assert bad["verdict"] == "compile_error"

        budget = _data(await s.call_tool("budget_left", {}))
        seen["budget"] = budget

    anyio.run(_stdio_session, run_dir, (), body)
    assert seen["budget"]["spent"]["evaluations"] == 6  # the duplicate is not re-evaluated
    con = sqlite3.connect(run_dir / "run.db")
    calls = con.execute("SELECT provider, model, prompt, response, error FROM proposer_calls").fetchall()
    assert {c[1] for c in calls} == TOOLS and all(c[0] == "mcp" for c in calls)
    errors = [c for c in calls if c[4]]
    assert len(errors) == 3 and any("unknown task" in c[4] for c in errors)
    assert con.execute("SELECT COUNT(*) FROM candidates").fetchone()[0] == 2
    # the secret never left the run directory's secret file
    secret = (run_dir / "secret").read_text().strip()
    assert all(secret not in (c[3] or "") for c in calls)


def test_budget_exhausted_is_an_error_result(tmp_path):
    async def body(s: ClientSession) -> None:
        assert _data(await s.call_tool("list_tasks", {}))["count"] == 1
        assert _data(await s.call_tool("show_task", {"task": "tiny_relu"}))["name"] == "tiny_relu"
        r = await s.call_tool("list_tasks", {})
        assert r.is_error and "budget exhausted" in r.content[0].text
        left = _data(await s.call_tool("budget_left", {}))
        assert left["left"]["calls"] == 0 and left["limits"]["calls"] == 2

    anyio.run(_stdio_session, tmp_path / "run", ("--max-calls", "2"), body)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_streamable_http_one_call(tmp_path):
    port = _free_port()
    proc = subprocess.Popen([sys.executable, *_argv(tmp_path / "run", "--transport", "http",
                                                   "--port", str(port))],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                time.sleep(0.2)

        async def main() -> dict:
            async with streamable_http_client(url) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return _data(await session.call_tool("show_task", {"task": "tiny_relu"}))

        shown = anyio.run(main)
        assert shown["name"] == "tiny_relu" and shown["public_shapes"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_bad_backend_at_start_is_one_message(tmp_path):
    r = subprocess.run([sys.executable, *_argv(tmp_path / "run", "--backend", "nope")],
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "unknown backend 'nope'" in r.stderr


def test_a_task_path_from_the_agent_is_refused_before_anything_is_imported(tmp_path, monkeypatch):
    """Red-team round of 2026-12-03: a submitted TVM graph is stored as
    RUN/candidates/<hash>/graph.py; naming that file as a tool's task imported
    it in the server's process. The tools take task names only."""
    from kstrata.serve.mcp_server import KernelServer
    from kstrata.serve.service import ServeError

    mark = tmp_path / "imported.txt"
    payload = tmp_path / "payload.py"
    payload.write_text(f"open({str(mark)!r}, 'w').write('ran')\n")
    monkeypatch.chdir(tmp_path)
    srv = KernelServer(tmp_path / "run", backend="pytorch", time_candidates=False)
    try:
        for name in (str(payload), "payload.py", "./payload", "../x/payload.py", "a\\b"):
            with pytest.raises(ServeError, match="path|unknown task"):
                srv.show_task(task=name)
        with pytest.raises(ServeError, match="did you mean relu"):
            srv.show_task(task="reluu")
        assert srv.show_task(task="relu")["backend"] == "pytorch"
    finally:
        srv.close()
    assert not mark.exists()
