import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "norm",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 2048, "D": 1024},
        "small": [{"B": 8, "D": 256}, {"B": 5, "D": 77}],
        "sweep": [{"B": 1, "D": 1024}, {"B": 127, "D": 1001}],
    },
}

B, D = 2048, 1024


class Model(nn.Module):
    """Row-wise L2 normalization of a transposed (non-contiguous) input."""

    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + self.eps)


def get_inputs():
    return [torch.randn(D, B).t()]   # [B, D], stride (1, B)


def get_init_inputs():
    return [1e-3]
