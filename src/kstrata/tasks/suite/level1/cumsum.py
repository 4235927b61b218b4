"""Inclusive prefix sum over the last axis: y[b, i] = sum_{j <= i} x[b, j]
(KernelBench level 1 #89); a scan, parallelised by e.g. Blelloch's work-efficient algorithm."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "scan",
    "dtype": "float32",
    "description": "torch.cumsum along the last axis of a (B, D) tensor. Inputs are N(0.5, 1) "
    "so partial sums drift away from zero; sweep sizes cross block boundaries.",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 1, "D": 2},
            {"B": 3, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 17, "D": 65537},
        ],
    },
    # one add per element
    "flops": "B*D",
    # read x, write y (fp32)
    "bytes": "4*2*B*D",
    "tags": ["scan", "memory-bound"],
}

B = 4096
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=-1)


def get_inputs():
    return [torch.randn(B, D) + 0.5]


def get_init_inputs():
    return []
