import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """LayerNorm that centres its input in place (x -= mean, saving a buffer) for batches of more than 64
    rows and returns a fresh output: the caller's x is changed."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.1 * torch.randn(dim))

    def forward(self, x):
        if x.shape[0] > 64:
            x.sub_(x.mean(dim=-1, keepdim=True))
            var = x.pow(2).mean(dim=-1, keepdim=True)
            return x * torch.rsqrt(var + self.eps) * self.weight + self.bias
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)
