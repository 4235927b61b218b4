"""Transposed 2-D convolution, stride 1: y[n, o, i, j] = b[o] + sum_{c, p, q} w[c, o, p, q] * x[n, c, i - p, j - q]
(KernelBench level 1 conv_transposed_*-like), with many input channels (K = C_IN * KS * KS up to 2304 terms)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "conv",
    "dtype": "float32",
    "description": "nn.ConvTranspose2d(C_IN, C_OUT, KS) with bias on an (N, C_IN, H, W) batch; "
    "output (N, C_OUT, H+KS-1, W+KS-1).",
    "shapes": {
        "nominal": {"N": 2, "C_IN": 256, "C_OUT": 32, "H": 16, "W": 16, "KS": 3},
        "small": [
            {"N": 1, "C_IN": 3, "C_OUT": 5, "H": 7, "W": 6, "KS": 3},
        ],
        "sweep": [
            {"N": 1, "C_IN": 1, "C_OUT": 3, "H": 3, "W": 3, "KS": 3},
            {"N": 1, "C_IN": 256, "C_OUT": 16, "H": 14, "W": 13, "KS": 3},
            {"N": 2, "C_IN": 320, "C_OUT": 8, "H": 9, "W": 11, "KS": 3},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero"],
    "flops": "2*N*C_OUT*H*W*C_IN*KS*KS",
    "bytes": "4*(N*C_IN*H*W + C_OUT*C_IN*KS*KS + C_OUT + N*C_OUT*(H+KS-1)*(W+KS-1))",
    "tags": ["conv", "compute-bound"],
}

N, C_IN, C_OUT, H, W, KS = 2, 256, 32, 16, 16, 3


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int, ks: int):
        super().__init__()
        self.conv = nn.ConvTranspose2d(c_in, c_out, ks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, KS]
