"""Queue round rt78 (quantize_per_channel, tvm-llvm): the prompt said "every
test runs the task's inputs under one of these" draws, and the description
"s = 0.8 * amax|w[n]| / 127, so ... its largest values saturate", while the
judge draws `w` alone (``dist_inputs [0]``) and keeps the scale get_inputs()
computed from the undrawn w: under `outliers` or `shifted` most of a row
saturates, which the prompt gave no way to know. The draw line now names the
inputs the draws change and says the others are not drawn."""

from __future__ import annotations

import torch

from kstrata.agents.prompt import Feedback, PromptContext, TaskContract, build_prompt
from kstrata.tasks.inputs import apply_distribution
from kstrata.tasks.loader import resolve_task


def _draw_line(name: str) -> str:
    ctx = PromptContext(task=TaskContract.from_task(resolve_task(name)), backend="triton-interp",
                        level="source", role="single", sources={"source": "x = 1\n"},
                        feedback=Feedback(verdict="correct"))
    user = build_prompt(ctx)[-1]["content"]
    return next(ln for ln in user.splitlines() if ln.startswith("- input draws"))


def test_a_task_drawing_one_input_names_it_and_the_undrawn_ones():
    line = _draw_line("quantize_per_channel")
    assert "the draws change `w` only; `scale` is not drawn" in line
    assert "not recomputed after it" in line
    # what the line says is what the judge does: the scale stays while w changes
    task = resolve_task("quantize_per_channel")
    w = torch.randn(4, 8)
    scale = 0.8 * w.abs().amax(dim=1) / 127
    w2, s2 = apply_distribution([w, scale], "shifted", seed=1, only=task.meta.dist_inputs)
    assert torch.equal(s2, scale) and not torch.equal(w2, w)


def test_a_task_drawing_every_input_keeps_the_plain_line():
    assert _draw_line("rmsnorm") == "- input draws (every test runs the task's inputs under one of these):"
