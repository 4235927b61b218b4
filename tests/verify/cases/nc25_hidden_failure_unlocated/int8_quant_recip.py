# EXPECT: debatable - a common speed trick: multiply by 127/amax instead of dividing by amax/127; flips a few values by 1 LSB near .5 ties. Ideally "incorrect" with a message saying it is a rounding-boundary difference (or accepted with a documented int tolerance).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        amax = x.abs().amax(dim=-1, keepdim=True)
        scale = (amax / 127.0).clamp_min(1e-8)
        q = torch.round(x * (1.0 / scale)).clamp(-127, 127).to(torch.int8)   # reciprocal multiply
        return q, scale
