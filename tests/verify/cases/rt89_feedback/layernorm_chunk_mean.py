"""LayerNorm over chunks of 4096 columns whose mean is the first chunk's only: right at every D up to 4096 (one
chunk: every public and screening size), wrong past it. Queue round rt82's open item (a Triton gemv whose x
offset was wrong past its first 1024-wide K chunk): the hidden failure's public probes were all smaller than the
public shape, so they passed and nothing named a size past the public ones."""

import torch
import torch.nn as nn

CHUNK = 4096


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        head = x[..., :CHUNK]
        mean = head.sum(-1, keepdim=True) / head.shape[-1]  # the first chunk's count: the whole row's below 4097
        xc = x - mean
        var = (xc * xc).mean(-1, keepdim=True)
        return xc * torch.rsqrt(var + self.eps) * self.weight + self.bias
