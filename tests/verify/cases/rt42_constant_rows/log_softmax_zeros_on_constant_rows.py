import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """log_softmax that returns 0 (log 1) for a row whose values are all equal, instead of -log D."""

    def forward(self, x):
        y = torch.log_softmax(x, dim=-1)
        constant = x.amax(dim=-1, keepdim=True) == x.amin(dim=-1, keepdim=True)
        return torch.where(constant, torch.zeros_like(y), y)
