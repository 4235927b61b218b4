import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Honest: multiplies by the reciprocal of the scale it is given."""

    def __init__(self):
        super().__init__()

    def forward(self, x, scale):
        return torch.round(x * (1.0 / scale)).clamp(-128, 127).to(torch.int8)
