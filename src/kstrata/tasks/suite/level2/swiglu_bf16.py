"""SwiGLU gate in bfloat16 (float32 accumulation): y = SiLU(x @ W1^T) * (x @ W3^T)
(Shazeer 2020, "GLU Variants Improve Transformer"; the LLaMA feed-forward up-projection).
Two GEMMs sharing the A operand, fused with the gating epilogue."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 2,
    "category": "fusion",
    "dtype": "bfloat16",
    "description": "silu(x @ W1^T) * (x @ W3^T) for x (M, D) and bias-free W1, W3 (H, D); "
    "output (M, H). Reading x once for both GEMMs is the fusion.",
    "shapes": {
        "nominal": {"M": 4096, "D": 4096, "H": 11008},
        "small": [{"M": 16, "D": 64, "H": 96}, {"M": 5, "D": 77, "H": 33}],
        "sweep": [
            {"M": 1, "D": 2, "H": 3},
            {"M": 127, "D": 33, "H": 129},
            {"M": 1001, "D": 257, "H": 17},
            {"M": 509, "D": 521, "H": 1031},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "near_zero"],
    "precision": {"allow_reduced_precision": True},
    # two GEMMs, then silu (4) and a multiply per output
    "flops": "4*M*H*D + 5*M*H",
    # read x, W1 and W3, write y (2-byte elements)
    "bytes": "2*(M*D + 2*H*D + M*H)",
    "tags": ["gemm", "gated", "half"],
}

M = 4096
D = 4096
H = 11008


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False).to(torch.bfloat16)
        self.w3 = nn.Linear(dim, hidden, bias=False).to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.w1(x)) * self.w3(x)


def get_inputs():
    return [torch.randn(M, D).to(torch.bfloat16)]


def get_init_inputs():
    return [D, H]
