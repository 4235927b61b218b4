"""A task whose reference fails at a shape the judge verifies at stops a run
with one message instead of filling it with evaluator_exception verdicts
(red-team rt59, left open: `optimize` spent its budget on them and the error,
with a hidden shape, went into the next prompt), and the MCP server names it
the task's fault rather than an internal error."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

KSTRATA = str(Path(sys.executable).with_name("kstrata"))
#: works at its small shape (N=8, what the screening verifies), returns a dict past N=40 (the full scope's)
TASK = ('import torch\nN = 64\nKSTRATA = {"shapes": {"nominal": {"N": 64}, "small": [{"N": 8}], '
        '"sweep": [{"N": 64}]}}\n'
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x): return torch.relu(x) if x.shape[0] < 40 else {'a': x}\n"
        "def get_inputs(): return [torch.randn(N, 16)]\ndef get_init_inputs(): return []\n")
TRITON_RELU = '''import torch
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(y_ptr + i, tl.maximum(tl.load(x_ptr + i, mask=m), 0.0), mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
        return y
'''


def test_optimize_stops_with_one_message_and_stores_no_evaluator_exception(tmp_path):
    """On tvm-llvm (timed), so the run's best is verified at the full scope, where the reference fails: on
    triton-interp a start given with --initial is no longer confirmed there (4656329), which this test used.
    One evaluation (the start, correct at the small scope) reaches that confirmation as two did: the second
    was one more TVM build and timing (89 s of CI's run, 2026-12-06; about 40% less wall time here)."""
    task, run = tmp_path / "task_broken_big.py", tmp_path / "run"
    task.write_text(TASK.replace('"nominal": {"N": 64}', '"nominal": {"N": 8}').replace("N = 64", "N = 8"))
    p = subprocess.run([KSTRATA, "optimize", str(task), "--backend", "tvm-llvm",
                        "--budget", "evals=1", "--out", str(run)], capture_output=True, text=True, timeout=900)
    out = p.stdout + p.stderr
    assert p.returncode == 2 and "Traceback" not in out, (p.returncode, out[-3000:])
    assert "cannot be verified" in out and "returned a dict" in out and str(task) in out, out[-3000:]
    with sqlite3.connect(run / "run.db") as db:
        text = " ".join(str(r) for r in db.execute("select * from evaluations"))
    assert "evaluator_exception" not in text and "ReferenceFailure" not in text, text[:2000]


def test_mcp_says_the_task_cannot_be_used(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "broken_big.py").write_text(TASK)
    seen: dict = {}

    async def body(s: ClientSession) -> None:
        r = await s.call_tool("evaluate_candidate", {"task": "broken_big", "source": TRITON_RELU,
                                                     "backend": "triton-interp"})
        seen["error"], seen["text"] = r.is_error, r.content[0].text

    async def session() -> None:
        params = StdioServerParameters(command=sys.executable, args=[
            "-c", "from kstrata.cli.main import app; app()", "mcp", "--run", str(tmp_path / "run"),
            "--tasks", str(tasks), "--backend", "triton-interp", "--timing-reps", "20"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await body(s)

    anyio.run(session)
    assert seen["error"], seen
    assert "task cannot be used" in seen["text"] and "internal error" not in seen["text"], seen["text"]
