import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """A correct argmax that returns the LAST index among equal maxima (as a
    parallel reduction whose later lane wins ties may)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        n = x.shape[self.dim]
        return (n - 1) - torch.argmax(torch.flip(x, dims=[self.dim]), dim=self.dim)
