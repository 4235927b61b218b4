import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, slope):
        return torch.where(x >= 0, x, x * slope)
