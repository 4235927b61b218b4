import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Honest per-token int8 fake quantization that multiplies by the reciprocal of the scale (one division
    per row instead of one per element): it rounds a few elements at ties the other way from the reference."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        s = x.abs().amax(dim=-1, keepdim=True) / 127
        return torch.round(x * (1.0 / s)).clamp(-127, 127) * s
