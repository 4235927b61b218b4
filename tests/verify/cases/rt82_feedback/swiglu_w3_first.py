"""SwiGLU with its stacked weight in the wrong order: [W3; W1], SiLU on the first half, so it computes
silu(x W3^T) * (x W1^T). Queue round rt82: the feedback said where the output was wrong, not that it is the
reference's with w1 and w3 exchanged."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.w1.weight.shape[0]
        y = torch.mm(x, torch.cat([self.w3.weight, self.w1.weight], dim=0).t())
        return F.silu(y[:, :h]) * y[:, h:]
