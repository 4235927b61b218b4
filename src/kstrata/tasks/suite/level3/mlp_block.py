"""Pre-norm transformer MLP block: y = x + W2 GELU(W1 LayerNorm(x) + b1) + b2
(GPT-2 feed-forward with a 4x hidden width; Radford et al. 2019, Vaswani et al. 2017)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 3,
    "category": "mlp",
    "dtype": "float32",
    "description": "LayerNorm -> Linear(D, 4D) -> GELU -> Linear(4D, D) -> residual add, on "
    "x of shape (B, S, D).",
    "shapes": {
        "nominal": {"B": 8, "S": 512, "D": 1024},
        "small": [{"B": 2, "S": 16, "D": 32}, {"B": 1, "S": 5, "D": 33}],
        "sweep": [
            {"B": 1, "S": 1, "D": 3},
            {"B": 2, "S": 17, "D": 77},
            {"B": 3, "S": 127, "D": 96},
            {"B": 1, "S": 257, "D": 260},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "near_zero", "shifted"],
    # LayerNorm (8/elem), two GEMMs of 2*B*S*D*4D each, biases, GELU (14/elem), residual
    "flops": "8*B*S*D + 16*B*S*D*D + 4*B*S*D + 14*4*B*S*D + 2*B*S*D",
    # read x, LN params, W1/b1, W2/b2, write y (fp32); the hidden stays on chip in the ideal
    "bytes": "4*(2*B*S*D + 2*D + 8*D*D + 4*D + D)",
    "tags": ["mlp", "gemm", "graph"],
}

B = 8
S = 512
D = 1024
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=EPS)
        nn.init.normal_(self.norm.weight, 1.0, 0.1)
        nn.init.normal_(self.norm.bias, 0.0, 0.1)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


def get_inputs():
    return [torch.randn(B, S, D)]


def get_init_inputs():
    return [D]
