# Softmax whose row maximum reads three elements past the end of the input (last row).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        b, d = x.shape
        wide = torch.as_strided(x, (b, d + 3), (d, 1))  # one window per row, three elements too wide
        m = wide.max(dim=1, keepdim=True).values
        e = torch.exp(x - m)
        return e / e.sum(dim=1, keepdim=True)
