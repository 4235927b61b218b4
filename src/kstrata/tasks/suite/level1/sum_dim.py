"""Sum reduction over the last axis: y[b] = sum_d x[b, d] (KernelBench level 1 #47)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "reduction",
    "dtype": "float32",
    "description": "Row sums of a (B, D) tensor, output (B, 1). Zero-mean inputs still give "
    "sums of size ~sqrt(D), far from zero.",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 3, "D": 2},
            {"B": 3, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 17, "D": 65537},
        ],
    },
    # one add per element
    "flops": "B*D",
    # read x (fp32), write B sums
    "bytes": "4*(B*D + B)",
    "tags": ["reduction", "memory-bound"],
}

B = 4096
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
