import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(channels))

    def forward(self, x, g):
        return torch.einsum("bcl,bcl,c->bl", x, torch.sigmoid(g), self.weight)
