"""Tall-skinny matrix multiplication: C = A @ B, A of shape (M, K) with M >> K, B of
shape (K, N) with small N (KernelBench level 1 #9-like); memory bound on A."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "matmul",
    "dtype": "float32",
    "description": "C = A @ B with A (M, K) tall and B (K, N) narrow; arithmetic intensity "
    "is ~N/4 FLOP/byte, so a square-GEMM tiling wastes most of its tile.",
    "shapes": {
        "nominal": {"M": 65536, "K": 512, "N": 64},
        "small": [{"M": 256, "K": 64, "N": 16}, {"M": 77, "K": 33, "N": 5}],
        "sweep": [
            {"M": 1, "K": 2, "N": 3},
            {"M": 4099, "K": 17, "N": 3},
            {"M": 10007, "K": 129, "N": 31},
            {"M": 65537, "K": 256, "N": 64},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero"],
    # one multiply-add per (m, n, k)
    "flops": "2*M*N*K",
    # read A and B, write C (fp32)
    "bytes": "4*(M*K + K*N + M*N)",
    "tags": ["gemm", "memory-bound"],
}

M = 65536
K = 512
N = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
