"""RMSNorm followed by a linear projection: y = (x / sqrt(mean(x^2) + eps) * g) @ W^T
(RMSNorm of Zhang & Sennrich 2019 feeding the QKV/up projection of a pre-norm transformer).
The per-row scale can be applied after the GEMM, so the norm fuses into its prologue or
epilogue."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 2,
    "category": "fusion",
    "dtype": "float32",
    "description": "RMSNorm (learned (D,) gain) of x (M, D), then @ W^T with W (N, D), no "
    "bias; output (M, N).",
    "shapes": {
        "nominal": {"M": 4096, "D": 4096, "N": 4096},
        "small": [{"M": 16, "D": 64, "N": 96}, {"M": 5, "D": 77, "N": 33}],
        "sweep": [
            {"M": 1, "D": 2, "N": 3},
            {"M": 127, "D": 33, "N": 129},
            {"M": 1001, "D": 257, "N": 17},
            {"M": 509, "D": 1031, "N": 521},
        ],
    },
    # RMSNorm (4 per element of x), then the GEMM
    "flops": "4*M*D + 2*M*N*D",
    # read x, gain and W, write y (fp32)
    "bytes": "4*(M*D + D + N*D + M*N)",
    "tags": ["norm", "gemm", "prologue"],
}

M = 4096
D = 4096
N = 4096
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, dim: int, out_features: int, eps: float = EPS):
        super().__init__()
        self.eps = eps
        self.gain = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.proj = nn.Linear(dim, out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.gain
        return self.proj(h)


def get_inputs():
    return [torch.randn(M, D)]


def get_init_inputs():
    return [D, N]
