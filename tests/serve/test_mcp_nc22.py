"""MCP: ``list_tasks`` gives a task's description from its ``Model``
docstring where the task's metadata has none, and a call of a tool name that
does not exist names the real tools (newcomer nc22: ``"description": ""`` for a
Model with a docstring; ``Unknown tool: evaluate`` named none)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from kstrata.serve.public import task_summary
from kstrata.tasks.loader import load_task

TASKS = Path(__file__).parents[1] / "cli" / "cases" / "nc22"  # maxmean.py, the only task file there


def test_a_tasks_description_falls_back_to_its_model_docstring():
    task = load_task(TASKS / "maxmean.py")
    assert task_summary(task)["description"] == "Row max minus row mean: y[b] = max_d x[b,d] - mean_d x[b,d]."
    tiny = load_task(Path(__file__).parent / "tasks" / "tiny_relu.py")  # metadata's own description wins
    assert task_summary(tiny)["description"] == "Elementwise ReLU of a (B, D) tensor (test-sized)."


def test_an_unknown_tool_names_the_tools(tmp_path):
    async def body() -> None:
        params = StdioServerParameters(command=sys.executable, args=[
            "-c", "from kstrata.cli.main import app; app()", "mcp", "--run", str(tmp_path / "run"),
            "--tasks", str(TASKS)])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            r = await s.call_tool("evaluate", {})
            text = r.content[0].text
            assert r.is_error and "unknown tool 'evaluate'" in text, text
            assert "Did you mean: evaluate_candidate" in text and "list_tasks" in text and "get_best" in text
            listed = await s.call_tool("list_tasks", {})
            assert "Row max minus row mean" in listed.content[0].text

    anyio.run(body)
