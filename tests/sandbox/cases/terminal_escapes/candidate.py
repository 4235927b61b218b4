"""A load error whose message moves the cursor up two lines, erases the
verdict line and prints a forged "correct" with a passing message, then sets
the terminal's title and (OSC 52) the clipboard; its output to stderr does
the same. ``kstrata eval`` printed it as it came: on a terminal the
``compile_error`` line read ``correct``."""

import sys

import torch
import torch.nn as nn

FORGED = ("\x1b[2A\x1b[2K\x1b[32mcorrect\x1b[0m\x1b[1B\x1b[2K  message: 36 public and 90 hidden tests pass"
          "\x1b]0;pwned\x1b\\\x1b]52;c;ZWNobyBwd25lZA==\x1b\\\u202e")
print(FORGED, file=sys.stderr)
raise RuntimeError(FORGED)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
