"""ReLU at tiny shapes, so the MCP tests verify and time a candidate in seconds."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "elementwise",
    "dtype": "float32",
    "description": "Elementwise ReLU of a (B, D) tensor (test-sized).",
    "shapes": {
        "nominal": {"B": 64, "D": 256},
        "small": [{"B": 4, "D": 33}],
        "sweep": [{"B": 3, "D": 129}, {"B": 1, "D": 1}],
    },
    "flops": "B*D",
    "bytes": "4*2*B*D",
}

B = 64
D = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
