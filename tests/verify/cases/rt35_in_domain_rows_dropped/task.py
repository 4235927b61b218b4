# KernelBench-format task without kstrata metadata: mean(exp(x)) over short rows of 8 normal
# values. Under kstrata's 'large' draw (x * 100) some rows overflow fp32 exp, most do not.
import torch
import torch.nn as nn

batch_size = 4096
width = 8


class Model(nn.Module):
    """mean(exp(x)) over the last dimension: (rows, 8) -> (rows,)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.exp(x).mean(dim=-1)


def get_inputs():
    return [torch.randn(batch_size, width)]


def get_init_inputs():
    return []
