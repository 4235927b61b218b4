"""LayerNorm over the last axis in bfloat16: y = (x - mean) / sqrt(var + eps) * weight + bias
(Ba, Kiros & Hinton 2016)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 1,
    "category": "norm",
    "dtype": "bfloat16",
    "description": "LayerNorm of a (B, D) bfloat16 activation with bfloat16 (D,) weight and "
    "bias; statistics are expected in float32.",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 1, "D": 3},
            {"B": 3, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 17, "D": 32771},
        ],
    },
    "precision": {"allow_reduced_precision": True},
    # mean, centre, square, sum, scale, multiply, add per element
    "flops": "8*B*D",
    # read x, write y, read weight and bias (bf16)
    "bytes": "2*(2*B*D + 2*D)",
    "tags": ["norm", "memory-bound", "half"],
}

B = 4096
D = 4096
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, dim: int, eps: float = EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((1 + 0.1 * torch.randn(dim)).to(torch.bfloat16))
        self.bias = nn.Parameter((0.1 * torch.randn(dim)).to(torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)


def get_inputs():
    return [torch.randn(B, D).to(torch.bfloat16)]


def get_init_inputs():
    return [D]
