"""A candidate killed by a signal is told what the signal likely means
(newcomer nc11: an out-of-bounds Triton launch reported only SIGABRT): an
out-of-bounds pointer for a memory fault or an abort, where in its file it
happened, and the end of its stderr when kstrata kept it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.verify.crash import crash_item

OOB_SOFTMAX = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * D + cols, mask=cols < D, other=-float("inf"))
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    s = tl.sum(tl.where(cols < D, e, 0.0), axis=0)
    tl.store(y_ptr + row * D * 1000003 + cols, e / s, mask=cols < D)  # BUG: a row offset far out of bounds


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        B, D = x.shape
        y = torch.empty_like(x)
        softmax_kernel[(B,)](x, y, D, BLOCK=triton.next_power_of_2(D))
        return y
'''


def _eval_interp(tmp_path, task: str, source: str) -> dict:
    """``kstrata eval TASK FILE --backend triton-interp --scope small --no-time --json`` of ``source``."""
    cand = tmp_path / "candidate.py"
    cand.write_text(source)
    r = CliRunner().invoke(app, ["eval", task, str(cand), "--backend", "triton-interp", "--scope", "small",
                                 "--no-time", "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output.strip().splitlines()[-1])


def test_an_out_of_bounds_triton_store_is_told_what_likely_happened(tmp_path):
    out = _eval_interp(tmp_path, "softmax", OOB_SOFTMAX)
    assert out["verdict"] == "runtime_error", out
    if out["check"] != "crash":
        # the interpreter's bounds watch (kstrata.backends.triton.fidelity) stops the store before it lands
        message = out["evidence"]["message"]
        assert "OutOfBounds" in message and "out-of-bounds store in kernel softmax_kernel" in message, out
        return
    [crash] = [f for f in out["feedback"] if f["kind"] == "crash"]
    assert crash["data"]["signal"] in ("SIGSEGV", "SIGBUS", "SIGABRT")
    assert "out-of-bounds pointer" in crash["text"] and "illegal memory access" in crash["text"]
    assert "interpreter" in crash["text"]
    if out["evidence"].get("output_tail"):  # faulthandler's stack names a line of the candidate's file
        # Where the stray store faults depends on what it hit: inside the kernel (line 15) on one machine, at
        # the launch in forward (line 23) on another (CI); either way only the candidate's own frames are told.
        assert "end of its stderr" in crash["text"], crash["text"]
        assert ("line 15 in softmax_kernel" in crash["text"] or "line 23 in forward" in crash["text"]), crash["text"]
        assert "interpreter.py" not in crash["text"]


def test_an_abort_names_the_heap_corruption_and_leaves_other_frames_out():
    tail = ("free(): invalid next size (fast)\nFatal Python error: Aborted\n\nCurrent thread (most recent call "
            "first):\n  File \"/usr/lib/python3.11/site-packages/triton/runtime/interpreter.py\", line 1005 in "
            "<lambda>\n  File \"/tmp/kstrata-cand-1/cand_ab12.py\", line 16 in softmax_kernel\n  File "
            "\"/tmp/kstrata-cand-1/cand_ab12.py\", line 27 in forward\n\nExtension modules: numpy, torch._C\n")
    crash = crash_item({"message": "the candidate process was killed by SIGABRT", "output_tail": tail}, "triton")
    assert crash["data"] == {"signal": "SIGABRT", "frames": ["line 16 in softmax_kernel", "line 27 in forward"],
                             "runtime": ["free(): invalid next size (fast)"]}
    assert "corrupted the heap" in crash["text"] and "interpreter.py" not in crash["text"]
    assert "Extension modules" not in crash["text"] and "interpreter" not in crash["text"]
    hidden = crash_item({"message": "the candidate process was killed by SIGSEGV"}, "triton")
    assert "out-of-bounds pointer" in hidden["text"] and "no stderr" in hidden["text"]
    assert crash_item({"message": "the candidate process was killed by SIGKILL"}, "triton") is None


OOB_TILE = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mean_kernel(x_ptr, y_ptr, R, D, BLOCK_D: tl.constexpr, BLOCK_R: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < D
    acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        tile = tl.load(x_ptr + (b * R + rows[:, None]) * D + cols[None, :], mask=mask[None, :], other=0.0)
        acc += tl.sum(tile, axis=0)
    tl.store(y_ptr + b * D + cols, acc / R, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        Bn, R, D = x.shape
        y = torch.empty((Bn, D), dtype=x.dtype, device=x.device)
        mean_kernel[(Bn, triton.cdiv(D, 128))](x, y, R, D, BLOCK_D=128, BLOCK_R=8)
        return y
'''


def test_an_out_of_bounds_triton_load_names_its_line_and_program_ids(tmp_path):
    """Queue round rt63 (mean_dim on triton-interp): a [BLOCK_R, BLOCK_D] tile
    loaded without the R mask read past the input; the message named the kernel
    and the program but not which of its loads. It now names the kernel's line,
    and on a grid of several axes the program ids as tl.program_id gives them."""
    out = _eval_interp(tmp_path, "mean_dim", OOB_TILE)
    assert out["verdict"] == "runtime_error", out
    message = out["evidence"]["message"]
    assert "out-of-bounds load in kernel mean_kernel at line 15 (`tile = tl.load(x_ptr + (b * R" in message, message
    assert "program 2 (linear grid index)" in message, message  # a (3, 1) grid: the index is program_id(0)
    from kstrata.backends.triton.fidelity import _Launch

    launch = _Launch("k")
    launch.begin(5, (3, 2, 1))  # grid order: program 5 is program_id(0) = 2, program_id(1) = 1
    assert launch.program_words() == ("program 5 (linear grid index; tl.program_id(0..1) = 2, 1 of a grid of "
                                      "3, 2)")
