"""Matrix-vector product in float16 (float32 accumulation): y = A @ x, A of shape
(M, K), x of shape (K, 1) (KernelBench level 1 #4, "Matrix vector multiplication");
memory bound on A."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "matmul",
    "dtype": "float16",
    "description": "GEMV y = A @ x with A (M, K) and x (K, 1); reading A once dominates.",
    "shapes": {
        "nominal": {"M": 8192, "K": 8192},
        "small": [{"M": 64, "K": 512}, {"M": 77, "K": 33}],
        "sweep": [
            {"M": 3, "K": 2},
            {"M": 4099, "K": 1},
            {"M": 127, "K": 1001},
            {"M": 8191, "K": 4099},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed"],
    "precision": {"allow_reduced_precision": True},
    # one multiply-add per element of A
    "flops": "2*M*K",
    # read A and x, write y (2-byte elements)
    "bytes": "2*(M*K + K + M)",
    "tags": ["gemv", "memory-bound", "half"],
}

M = 8192
K = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, x)


def get_inputs():
    return [torch.randn(M, K).half(), torch.randn(K, 1).half()]


def get_init_inputs():
    return []
