import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Softmax computed column-major (over dim 0 of the transposed copy): right values, transposed layout."""

    def forward(self, x):
        return torch.softmax(x.t().contiguous(), dim=0).t()
