"""Batched matrix multiplication: C[b] = A[b] @ B[b], A (BATCH, M, K), B (BATCH, K, N)
(KernelBench level 1 #3, "Batched matrix multiplication")."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "matmul",
    "dtype": "float32",
    "description": "torch.bmm of (BATCH, M, K) and (BATCH, K, N) float32 tensors.",
    "shapes": {
        "nominal": {"BATCH": 32, "M": 1024, "K": 1024, "N": 1024},
        "small": [{"BATCH": 4, "M": 64, "K": 32, "N": 48}, {"BATCH": 3, "M": 5, "K": 77, "N": 33}],
        "sweep": [
            {"BATCH": 1, "M": 1, "K": 2, "N": 3},
            {"BATCH": 7, "M": 127, "K": 33, "N": 129},
            {"BATCH": 2, "M": 1001, "K": 257, "N": 17},
            {"BATCH": 5, "M": 509, "K": 521, "N": 503},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero"],
    # one multiply-add per (b, m, n, k)
    "flops": "2*BATCH*M*N*K",
    # read A and B, write C (fp32)
    "bytes": "4*BATCH*(M*K + K*N + M*N)",
    "tags": ["gemm", "batched", "compute-bound"],
}

BATCH = 32
M = 1024
K = 1024
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
