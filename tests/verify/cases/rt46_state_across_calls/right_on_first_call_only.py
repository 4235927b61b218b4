import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Right on its first call only, 1% off after: state kept across calls."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        y = torch.softmax(x, dim=-1)
        return y if self.calls <= 1 else y * 1.01
