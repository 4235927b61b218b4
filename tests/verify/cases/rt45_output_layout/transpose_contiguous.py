import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """An honest transpose into contiguous memory."""

    def forward(self, x):
        return x.t().contiguous()
