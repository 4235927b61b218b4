import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 2,
    "category": "gemm",
    "dtype": "float32",
    "shapes": {
        "nominal": {"M": 1024, "K": 1024, "N": 1024},
        "small": [{"M": 16, "K": 64, "N": 32}, {"M": 7, "K": 33, "N": 19}],
        "sweep": [{"M": 1, "K": 128, "N": 64}, {"M": 65, "K": 127, "N": 129}],
    },
    "flops": "2*M*K*N + 8*M*N",
    "bytes": "4*(M*K + K*N + N + M*N)",
}

M, K, N = 1024, 1024, 1024


class Model(nn.Module):
    """GELU(x @ W^T + b), exact (erf) GELU."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
