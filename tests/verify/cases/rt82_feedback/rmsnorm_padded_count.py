"""RMSNorm whose mean of squares divides by D rounded up to 16 (the padded length of a 16-lane loop): every
output is sqrt(D16 / D) times too large, 1.01929 = sqrt(80/77) at D = 77 and right at D = 512. Queue round
rt78 (P2.3): the feedback read "output = 1.01929 x expected everywhere" without naming 80/77."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1]
        padded = (d + 15) // 16 * 16
        rms = torch.rsqrt(x.pow(2).sum(dim=-1, keepdim=True) / padded + self.eps)
        return x * rms * self.weight
