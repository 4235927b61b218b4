"""Square matrix multiplication: C = A @ B, A, B of shape (N, N)
(KernelBench level 1 #1, "Square matrix multiplication")."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "matmul",
    "dtype": "float32",
    "description": "C = A @ B for square float32 (N, N) matrices; compute bound. TF32 is not "
    "allowed (its 10-bit mantissa misses the oracle tolerance at N = 4096).",
    "shapes": {
        "nominal": {"N": 4096},
        "small": [{"N": 64}, {"N": 77}],
        "sweep": [{"N": 2}, {"N": 7}, {"N": 127}, {"N": 1001}, {"N": 2053}],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero"],
    # one multiply-add per (i, j, k)
    "flops": "2*N**3",
    # read A and B, write C (fp32)
    "bytes": "4*3*N**2",
    "tags": ["gemm", "compute-bound"],
}

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
