import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Writes into a buffer with padded rows and returns the unpadded slice: gaps between the rows."""

    def forward(self, x):
        out = torch.empty(x.shape[0], x.shape[1] + 16, dtype=x.dtype)
        out[:, : x.shape[1]] = x.clamp_min(0)
        return out[:, : x.shape[1]]
