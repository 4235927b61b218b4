"""Leaky ReLU whose negative slope is a Python number among the inputs (as KernelBench-style tasks pass
scalar arguments): y = max(x, 0) + slope * min(x, 0)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 1,
    "category": "activation",
    "shapes": {
        "nominal": {"B": 256, "D": 1024},
        "small": [{"B": 8, "D": 64}, {"B": 5, "D": 77}],
        "sweep": [{"B": 33, "D": 1001}],
    },
}

B, D = 256, 1024


class Model(nn.Module):
    def forward(self, x: torch.Tensor, slope: float) -> torch.Tensor:
        return F.leaky_relu(x, slope)


def get_inputs():
    return [torch.randn(B, D), 0.01]


def get_init_inputs():
    return []
