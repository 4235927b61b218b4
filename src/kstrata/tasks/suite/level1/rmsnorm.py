"""RMSNorm over the last dimension: y = x / sqrt(mean(x^2) + eps) * weight
(Zhang & Sennrich 2019, "Root Mean Square Layer Normalization")."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "norm",
    "dtype": "float32",
    "description": "RMSNorm over the last axis of a (B, D) activation with a learned (D,) weight.",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 1, "D": 4096},
            {"B": 127, "D": 1001},
            {"B": 3, "D": 2},
            {"B": 64, "D": 8193},
        ],
    },
    # square, sum, rsqrt, 2 multiplies per element
    "flops": "4*B*D",
    # read x, write y (fp32), read weight
    "bytes": "4*(2*B*D + D)",
}

B = 4096
D = 4096
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, dim: int, eps: float = EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return [D]
