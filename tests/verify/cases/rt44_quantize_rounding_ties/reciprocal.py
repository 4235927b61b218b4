import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Honest: multiplies by 1 / s (two roundings), so some quotients at a tie land on its other side."""

    def forward(self, x, scale):
        return torch.round(x * (1.0 / scale)).clamp(-128, 127).to(torch.int8)
