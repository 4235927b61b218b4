import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """log-sigmoid 1e-3 off everywhere (a wrong kernel: still incorrect)."""

    def forward(self, x):
        return torch.nn.functional.logsigmoid(x) - 1e-3
