import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Honest: each group's convolution on its own (float32), outputs concatenated; inside a group
    the channels in blocks of 64 added to a running float32 total."""

    def __init__(self, c_in, c_out, ks, groups):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, ks, groups=groups)

    def forward(self, x):
        c = self.conv
        g = c.groups
        ci, co = x.shape[1] // g, c.weight.shape[0] // g
        outs = []
        for j in range(g):
            xs, ws = x[:, j * ci:(j + 1) * ci], c.weight[j * co:(j + 1) * co]
            y = None
            for lo in range(0, ci, 64):
                part = F.conv2d(xs[:, lo:lo + 64], ws[:, lo:lo + 64])
                y = part if y is None else y + part
            outs.append(y)
        return torch.cat(outs, 1) + c.bias[None, :, None, None]
