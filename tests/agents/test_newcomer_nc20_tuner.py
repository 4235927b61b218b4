"""Newcomer round nc20: the built-in tuners.

A. The Triton tuner broke a kernel: ``grid = (triton.cdiv(n, 256),)`` beside
   ``BLOCK_SIZE=256`` at the launch was moved to ``BLOCK_SIZE=128`` alone, so
   half the outputs were never written. A launch constexpr the tuner changes
   must be one the grid follows; a copy of its value in the grid is changed
   with it where it provably is the same quantity, else it is not tuned and
   the proposer's record says why.
B. A tilelang-c search with the built-in tuner expanded the start at graph,
   schedule and source though the tuner edits the schedule only, and its stop
   line named "(graph, schedule, source)".
"""

from __future__ import annotations

import random
import re
from types import SimpleNamespace

import pytest

import kstrata
from kstrata.agents.base import ProposeContext
from kstrata.agents.builtin import TileLangTuneProposer, TritonTuneProposer
from kstrata.backends.registry import get_backend
from kstrata.backends.tilelang import tune_rules as tl
from kstrata.backends.triton import tune_rules as tr
from kstrata.cli.optimize import _check_tune_markers
from kstrata.search import Budget, SearchSettings, optimize

HEAD = '''import torch
import torch.nn as nn
import triton
import triton.language as tl

{consts}

@triton.jit
def bias_gelu_kernel(x_ptr, b_ptr, y_ptr, n, H, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs % H, mask=m, other=0.0).to(tl.float32)
    y = x + b
    g = 0.5 * y * (1.0 + tl.erf(y * 0.7071067811865476))
    tl.store(y_ptr + offs, g.to(tl.float16), mask=m)


class ModelNew(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(h).half())

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
{launch}
        return y
'''


def _kernel(launch: str, consts: str = "") -> str:
    return HEAD.format(consts=consts, launch="\n".join("        " + ln for ln in launch.strip().splitlines()))


#: the newcomer's start (biasgelu_triton.py)
REPRO = _kernel("grid = (triton.cdiv(n, 256),)\n"
                "bias_gelu_kernel[grid](x, self.bias, y, n, x.shape[-1], BLOCK_SIZE=256)")


def _launch_and_grid(text: str) -> tuple[int, int]:
    block = int(re.search(r"BLOCK_SIZE=(\d+)\)", text).group(1))
    grid = int(re.search(r"cdiv\(n, (\d+)\)", text).group(1))
    return block, grid


def _block_moves(text: str) -> list[tr.Variant]:
    return [v for v in tr.variants(text) if "BLOCK_SIZE" in v.params or "BLOCK" in v.params]


def test_a_launch_block_size_moves_with_the_grid_that_has_its_value_written_in():
    moves = _block_moves(REPRO)
    assert {v.params["BLOCK_SIZE"] for v in moves} >= {128, 512}  # still tuned
    for v in moves:
        block, grid = _launch_and_grid(v.text)
        assert block == grid == v.params["BLOCK_SIZE"], v.description
        # nothing else changed: what the kernel computes is the same
        assert v.text.replace(str(block), "256") == REPRO


def test_a_module_constant_at_the_launch_moves_the_grid_literal_with_it():
    text = _kernel("grid = (triton.cdiv(n, 256),)\n"
                   "bias_gelu_kernel[grid](x, self.bias, y, n, x.shape[-1], BLOCK_SIZE=BLOCK_SIZE)",
                   "BLOCK_SIZE = 256")
    moves = _block_moves(text)
    assert {v.params["BLOCK_SIZE"] for v in moves} >= {128, 512}
    for v in moves:
        new = v.params["BLOCK_SIZE"]
        assert f"BLOCK_SIZE = {new}\n" in v.text and f"cdiv(n, {new})" in v.text, v.description


def test_a_grid_over_meta_is_still_tuned_and_left_as_it_is():
    grid = "grid = lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),)"
    text = _kernel(grid + "\nbias_gelu_kernel[grid](x, self.bias, y, n, x.shape[-1], BLOCK_SIZE=256)")
    moves = _block_moves(text)
    assert {v.params["BLOCK_SIZE"] for v in moves} >= {128, 512}
    assert all(grid in v.text for v in moves)
    assert tr.held_tunables(text) == []


def test_a_grid_of_a_separate_constant_or_an_ambiguous_literal_holds_the_block_back():
    separate = _kernel("bs = 256\ngrid = (triton.cdiv(n, bs),)\n"
                       "bias_gelu_kernel[grid](x, self.bias, y, n, x.shape[-1], BLOCK_SIZE=256)")
    not_cdiv = _kernel("grid = ((n + 255) // 256,)\n"
                       "bias_gelu_kernel[grid](x, self.bias, y, n, x.shape[-1], BLOCK_SIZE=256)")
    for text, says in ((separate, "bs = 256"), (not_cdiv, "256 written apart")):
        assert _block_moves(text) == [], text
        held = tr.held_tunables(text)
        assert len(held) == 1 and "BLOCK_SIZE" in held[0] and says in held[0], held


def test_a_held_tunable_is_said_in_the_proposers_record():
    separate = _kernel("bs = 256\ngrid = (triton.cdiv(n, bs),)\n"
                       "bias_gelu_kernel[grid](x, self.bias, y, n, x.shape[-1], BLOCK_SIZE=256, num_warps=4)")
    proposer = TritonTuneProposer(get_backend("triton-interp"))
    context = ProposeContext(backend="triton-interp", levels=("source",))
    candidate = SimpleNamespace(sources={"source": separate}, hash="c0ffee")
    batch = proposer.propose(None, candidate, None, "source", context=context)
    assert batch.proposals, "num_warps is still tuned"
    for p in batch.proposals:
        assert "BLOCK_SIZE" not in p.metadata["params"]
        assert any("bs = 256" in line for line in p.metadata["not_tuned"])
    bare = separate.replace("num_warps=4", "num_warps=nw").replace("bs = 256\n", "bs = 256\nnw = 4\n")
    batch = proposer.propose(None, SimpleNamespace(sources={"source": bare}, hash="c0ffee"), None, "source",
                             context=context)
    assert not batch.proposals and "bs = 256" in batch.skipped["diagnosis"]


#: a one-file TileLang start whose SCHEDULE declares no choices (what it computes does not matter here)
TL_KERNEL = 'import tilelang\n\nSCHEDULE = {"threads": 1}\n\n\nclass ModelNew:\n    pass\n'


def test_b_the_stop_line_names_only_the_levels_the_tuner_edits(tmp_path):
    backend = get_backend("tilelang-c")
    judge = SimpleNamespace(evaluate=lambda task, b, sources: ({"verdict": "correct", "feedback": []}, None))
    res = optimize(kstrata.load_task("rmsnorm"), backend, TileLangTuneProposer(backend), judge, "greedy",
                   Budget(evaluations=6), tmp_path / "run", settings=SearchSettings(final_contenders=0),
                   initial_sources={"source": TL_KERNEL, "schedule": "{}", "graph": "plan"})
    assert "at each of its levels (schedule);" in res.stop_reason, res.stop_reason
    assert "graph" not in res.stop_reason and "source)" not in res.stop_reason
    assert "the built-in tuner has nothing to tune on this kernel" in res.stop_reason


# B. `kstrata optimize softmax --backend tilelang-c` verified and timed the shipped start for minutes,
#    then stopped: only the elementwise TileLang kernels declared `# kstrata-tune:` choices.

@pytest.mark.parametrize("name", ["softmax", "rmsnorm", "log_softmax", "layernorm", "sum_dim", "max_dim",
                                  "fused_exp_mean"])
def test_b_the_shipped_tilelang_c_row_kernels_declare_rows_per_program(name, capsys):
    backend = get_backend("tilelang-c")
    sources = backend.initial_sources(kstrata.load_task(name))
    choices = tl.declared(sources["source"], "c")
    assert choices.get("rpb", ((),))[0] == (1, 2, 4, 8), choices
    moves = tl.schedule_variants(sources["source"], sources.get("schedule", ""), "c", random.Random(0), 8)
    assert {m[2]["rpb"] for m in moves} >= {2, 4}
    _check_tune_markers(sources, backend, None)
    assert "warning" not in capsys.readouterr().err


def test_b_a_shipped_tilelang_start_without_choices_is_warned_before_the_run(capsys):
    backend = get_backend("tilelang-c")
    sources = backend.initial_sources(kstrata.load_task("matmul_square"))
    assert not tl.declared(sources["source"], "c")
    _check_tune_markers(sources, backend, None)
    err = " ".join(capsys.readouterr().err.split())
    assert "warning: the start declares no `# kstrata-tune:` choices for target 'c'" in err
    assert "or use --proposer llm" in err
