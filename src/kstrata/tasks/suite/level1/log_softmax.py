"""Log-softmax over the last axis: y[b, i] = x[b, i] - m_b - log sum_j exp(x[b, j] - m_b),
m_b = max_j x[b, j] (KernelBench level 1 #24)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "softmax",
    "dtype": "float32",
    "description": "Row log-softmax of a (B, D) tensor. 'large' inputs need the max "
    "subtraction (log(softmax) underflows to -inf).",
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
    # max, subtract, exp, sum per element; log per row
    "flops": "5*B*D + B",
    # read x, write y (fp32)
    "bytes": "4*2*B*D",
    "tags": ["softmax", "memory-bound"],
}

B = 4096
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
