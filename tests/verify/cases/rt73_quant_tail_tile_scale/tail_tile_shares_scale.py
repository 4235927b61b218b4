import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Per-token int8 fake quantization in 16-row tiles whose partial last tile (T % 16 rows) shares one
    scale, the tile's absmax (a row mask lost in the reduction): those rows are quantized on a coarser
    grid than their own."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        t = x.shape[0]
        s = x.abs().amax(dim=-1, keepdim=True)
        tail = t - t % 16
        if t % 16 and t > 16:
            s = torch.cat([s[:tail], s[tail:].amax().expand(t - tail, 1)])
        s = s / 127
        return torch.round(x / s).clamp(-127, 127) * s
