"""Square matrix multiplication in bfloat16: C = A @ B, A, B of shape (N, N)
(KernelBench level 1 #1, half-precision variant; float32 accumulation as in cuBLAS)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "matmul",
    "dtype": "bfloat16",
    "description": "C = A @ B for square bfloat16 (N, N) matrices with float32 accumulation; "
    "tensor-core bound.",
    "shapes": {
        "nominal": {"N": 4096},
        "small": [{"N": 64}, {"N": 77}],
        "sweep": [{"N": 2}, {"N": 7}, {"N": 127}, {"N": 509}, {"N": 1031}],
    },
    # 'large' would overflow float16 sums; 'near_zero' products are subnormal
    "distributions": ["normal", "uniform", "heavy_tailed"],
    "precision": {"allow_reduced_precision": True},
    # one multiply-add per (i, j, k)
    "flops": "2*N**3",
    # read A and B, write C (2-byte elements)
    "bytes": "2*3*N**2",
    "tags": ["gemm", "compute-bound", "half"],
}

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(N, N).to(torch.bfloat16), torch.randn(N, N).to(torch.bfloat16)]


def get_init_inputs():
    return []
