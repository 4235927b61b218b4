import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Honest: im2col (F.unfold) then a float32 matrix product, then the bias."""

    def __init__(self, c_in, c_out, ks):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, ks)

    def forward(self, x):
        w = self.conv.weight
        n, _, h, wd = x.shape
        k = w.shape[-1]
        cols = F.unfold(x, k)  # (N, C*k*k, L)
        y = w.reshape(w.shape[0], -1) @ cols
        return (y + self.conv.bias[:, None]).reshape(n, w.shape[0], h - k + 1, wd - k + 1)
