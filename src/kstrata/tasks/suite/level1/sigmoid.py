"""Logistic sigmoid, elementwise: y = 1 / (1 + exp(-x)) (KernelBench level 1 #21)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "activation",
    "dtype": "float32",
    "description": "Elementwise sigmoid of a (B, D) tensor; memory bound. 'large' inputs "
    "test saturation (exp overflow must give 0, not NaN).",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 1, "D": 3},
            {"B": 1, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 33, "D": 65537},
        ],
    },
    # exp, add, reciprocal per element
    "flops": "3*B*D",
    # read x, write y (fp32)
    "bytes": "4*2*B*D",
    "tags": ["activation", "memory-bound"],
}

B = 4096
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
