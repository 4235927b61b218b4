import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Softmax over 64-wide column tiles whose out-of-range lanes load other=0.0 instead of -inf: the
    padding enters the max and exp(0 - max) enters the denominator (the output is cut back to D)."""

    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        d = x.shape[-1]
        pad = (-d) % 64
        xp = torch.nn.functional.pad(x, (0, pad), value=0.0)
        m = xp.amax(dim=-1, keepdim=True)
        e = torch.exp(xp - m)
        return (e / e.sum(dim=-1, keepdim=True))[..., :d].contiguous()
