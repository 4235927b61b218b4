"""Scale and shift of a (B, D) tensor whose shift is a plain tensor attribute drawn in __init__ (not a
Parameter or buffer: outside the state_dict), as some user models have."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "elementwise",
    "dtype": "float32",
    "description": "y = x * w + shift over a (B, D) tensor; w is a parameter, shift a plain tensor attribute.",
    "shapes": {
        "nominal": {"B": 64, "D": 256},
        "small": [{"B": 4, "D": 33}],
        "sweep": [{"B": 3, "D": 129}, {"B": 1, "D": 1}],
    },
    "flops": "2*B*D",
    "bytes": "4*2*B*D",
}

B = 64
D = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(D))
        self.shift = torch.randn(D)  # a plain attribute: not in the state_dict

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.w + self.shift


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
