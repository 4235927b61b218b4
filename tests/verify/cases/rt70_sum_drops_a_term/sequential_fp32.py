import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Honest row sums in another order than PyTorch's: 32 interleaved float32 lanes, each
    summed left to right, then the lanes left to right (a SIMD loop's order)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        b, d = x.shape
        pad = (-d) % 32
        lanes = torch.cat([x, x.new_zeros(b, pad)], 1).reshape(b, -1, 32)
        acc = x.new_zeros(b, 32)
        for k in range(lanes.shape[1]):
            acc = acc + lanes[:, k, :]
        out = x.new_zeros(b, 1)
        for j in range(32):
            out = out + acc[:, j:j + 1]
        return out
