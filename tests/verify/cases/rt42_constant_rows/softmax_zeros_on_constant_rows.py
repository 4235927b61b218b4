import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Softmax that returns zeros for a row whose values are all equal (red-team 2026-12-04)."""

    def forward(self, x):
        y = torch.softmax(x, dim=-1)
        constant = (x == x[..., :1]).all(dim=-1, keepdim=True)
        return torch.where(constant, torch.zeros_like(y), y)
