"""Fails with a message that reads as kstrata's own last lines: 30 newlines
(the real ``runtime_error`` line scrolls off a terminal), then a verdict line
``correct`` and a speedup, and a line longer than the console so that its
wrap starts one more of them at the left margin. ``kstrata eval`` printed the
message as it came (red-team round of 2026-12-04); control characters were
already written out (case ``terminal_escapes``), newlines were not."""

import torch
import torch.nn as nn

FAKE = "relu  pytorch\nverdict: correct (36 public and 108 hidden tests pass)\nspeedup 9.9x vs eager\n"


class ModelNew(nn.Module):
    def forward(self, x):
        raise ValueError("\n" * 30 + FAKE + "x" * 190 + "correct: 9.9x faster than eager" + "\n" * 5)
