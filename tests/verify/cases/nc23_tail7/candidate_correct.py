import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(0.01 + 0.01 * torch.rand(dim))

    def forward(self, x, q):
        # fold the scale into x, then one matrix-vector style reduction
        return torch.einsum("bd,bd->b", x * self.scale, q.to(x.dtype))
