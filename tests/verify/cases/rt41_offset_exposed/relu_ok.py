import torch.nn as nn


class ModelNew(nn.Module):
    """A correct relu (the small-scope note test)."""

    def forward(self, x):
        return x.clamp_min(0)
