"""Scaled matmul followed by softmax: y = softmax((x @ W^T) / sqrt(K), dim=-1)
(the score-softmax half of attention, Vaswani et al. 2017; KernelBench level 2
"Matmul_Scale_Softmax"-like)."""

import math

import torch
import torch.nn as nn

KSTRATA = {
    "level": 2,
    "category": "fusion",
    "dtype": "float32",
    "description": "softmax(x @ W^T / sqrt(K)) over the N outputs, x (M, K), W (N, K) ~ "
    "N(0, 1) without bias; the softmax spans the whole GEMM row, so a fused kernel needs "
    "a row-wide (or online) max and sum.",
    "shapes": {
        "nominal": {"M": 4096, "K": 1024, "N": 4096},
        "small": [{"M": 32, "K": 64, "N": 48}, {"M": 5, "K": 77, "N": 33}],
        "sweep": [
            {"M": 1, "K": 1, "N": 2},
            {"M": 127, "K": 33, "N": 129},
            {"M": 1001, "K": 257, "N": 17},
            {"M": 509, "K": 131, "N": 4099},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "near_zero"],
    # GEMM, then scale, max, subtract, exp, sum, divide per output
    "flops": "2*M*N*K + 6*M*N",
    # read x and W, write y (fp32)
    "bytes": "4*(M*K + N*K + M*N)",
    "tags": ["gemm", "softmax", "epilogue"],
}

M = 4096
K = 1024
N = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        # unit-variance weights: the scaled logits are ~N(0, 1), far from a flat softmax
        self.weight = nn.Parameter(torch.randn(out_features, in_features))
        self.scale = 1.0 / math.sqrt(in_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax((x @ self.weight.t()) * self.scale, dim=-1)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
