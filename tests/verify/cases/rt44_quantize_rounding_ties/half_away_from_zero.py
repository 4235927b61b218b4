import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Rounds half away from zero instead of half to even: one step off exactly at .5 ties, which the
    policy allows (the exact x / s is within rounding of a tie there)."""

    def forward(self, x, scale):
        v = x / scale
        return (torch.sign(v) * torch.floor(v.abs() + 0.5)).clamp(-128, 127).to(torch.int8)
