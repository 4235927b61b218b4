"""Linear layer with bias followed by ReLU in float16 (float32 accumulation):
y = max(x @ W^T + b, 0) (KernelBench level 2 "Gemm_BiasAdd_ReLU"); the bias and ReLU belong in the
GEMM epilogue."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 2,
    "category": "fusion",
    "dtype": "float16",
    "description": "relu(x @ W^T + b) for x (M, K) and an nn.Linear(K, N) with bias "
    "(PyTorch's default seeded init).",
    "shapes": {
        "nominal": {"M": 4096, "K": 4096, "N": 4096},
        "small": [{"M": 32, "K": 64, "N": 48}, {"M": 5, "K": 77, "N": 33}],
        "sweep": [
            {"M": 1, "K": 2, "N": 33},
            {"M": 127, "K": 33, "N": 129},
            {"M": 1001, "K": 257, "N": 17},
            {"M": 509, "K": 1031, "N": 521},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed"],
    "precision": {"allow_reduced_precision": True},
    # GEMM multiply-adds, then bias add and max per output
    "flops": "2*M*N*K + 2*M*N",
    # read x, W and b, write y (2-byte elements)
    "bytes": "2*(M*K + N*K + N + M*N)",
    "tags": ["gemm", "epilogue", "half"],
}

M = 4096
K = 4096
N = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(M, K).half()]


def get_init_inputs():
    return [K, N]
