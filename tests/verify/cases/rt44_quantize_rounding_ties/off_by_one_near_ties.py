import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """One step off where x / s is within 0.01 of a .5 tie but not within rounding of it: more than the
    policy allows (a rounding threshold of 0.49)."""

    def forward(self, x, scale):
        v = x / scale
        return torch.floor(v + 0.51).clamp(-128, 127).to(torch.int8)
