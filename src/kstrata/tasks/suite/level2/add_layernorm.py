"""Residual add followed by LayerNorm: y = LayerNorm(x + r) * weight + bias
(post-norm residual of Vaswani et al. 2017; LayerNorm of Ba et al. 2016). Fusing saves
writing and re-reading the sum."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 2,
    "category": "fusion",
    "dtype": "float32",
    "description": "layer_norm(x + r) over the last axis of (B, D) inputs with random (D,) "
    "weight and bias; output (B, D).",
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
    # residual add + LayerNorm (8 per element)
    "flops": "9*B*D",
    # read x and r, write y, read weight and bias (fp32)
    "bytes": "4*(3*B*D + 2*D)",
    "tags": ["norm", "residual", "memory-bound"],
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

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x + r, (x.shape[-1],), self.weight, self.bias, self.eps)


def get_inputs():
    return [torch.randn(B, D), torch.randn(B, D)]


def get_init_inputs():
    return [D]
