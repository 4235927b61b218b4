import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Per-token int8 fake quantization whose scale (absmax / 127) is stored as float16 (a kernel
    writing its scales to a half buffer) and then used in float32 for both the division and the
    dequantization: every value is off by the scale's rounding (~2^-12 relative), and values near a
    .5 step round to the other integer."""

    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        s = (x.abs().amax(dim=-1, keepdim=True) / 127).half().float()
        return torch.round(x / s).clamp(-127, 127) * s
