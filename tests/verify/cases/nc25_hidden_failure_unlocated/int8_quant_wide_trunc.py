# EXPECT: incorrect, on hidden tests only: rows longer than 600 (the sweep's D=1001 and D=4096, not the public D=512, 77) truncate columns 512 and on instead of rounding.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        scale = (x.abs().amax(dim=-1, keepdim=True) / 127.0).clamp_min(1e-8)
        q = torch.round(x / scale)
        if x.shape[-1] > 600:
            q[..., 512:] = torch.trunc(x[..., 512:] / scale)
        return q.clamp(-127, 127).to(torch.int8), scale
