"""LayerNorm over the last axis: y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias,
biased variance (Ba, Kiros & Hinton 2016; KernelBench level 1 #40)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 1,
    "category": "norm",
    "dtype": "float32",
    "description": "LayerNorm of a (B, D) activation with learned (D,) weight and bias "
    "(drawn randomly, so a candidate must apply them). 'near_zero' inputs test eps handling, "
    "'shifted' inputs a one-pass variance that cancels catastrophically.",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 1, "D": 3},
            {"B": 3, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 17, "D": 65537},
        ],
    },
    # mean, centre, square, sum, scale, multiply, add per element
    "flops": "8*B*D",
    # read x, write y, read weight and bias (fp32)
    "bytes": "4*(2*B*D + 2*D)",
    "tags": ["norm", "memory-bound"],
}

B = 4096
D = 4096
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, dim: int, eps: float = EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return [D]
