"""2-D convolution, stride 1, no padding: y[n, o, i, j] = b[o] + sum_{c, p, q}
w[o, c, p, q] * x[n, c, i + p, j + q] (KernelBench level 1 #55-like, square kernel)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "conv",
    "dtype": "float32",
    "description": "nn.Conv2d(C_IN, C_OUT, KS) with bias on an (N, C_IN, H, W) image batch; "
    "output (N, C_OUT, H-KS+1, W-KS+1). Weights use PyTorch's default (seeded) init.",
    "shapes": {
        "nominal": {"N": 16, "C_IN": 64, "C_OUT": 128, "H": 128, "W": 128, "KS": 3},
        "small": [
            {"N": 2, "C_IN": 8, "C_OUT": 16, "H": 16, "W": 16, "KS": 3},
            {"N": 1, "C_IN": 3, "C_OUT": 5, "H": 13, "W": 7, "KS": 3},
        ],
        "sweep": [
            {"N": 1, "C_IN": 1, "C_OUT": 3, "H": 3, "W": 3, "KS": 3},
            {"N": 3, "C_IN": 7, "C_OUT": 13, "H": 33, "W": 17, "KS": 5},
            {"N": 2, "C_IN": 17, "C_OUT": 33, "H": 65, "W": 67, "KS": 3},
            {"N": 4, "C_IN": 64, "C_OUT": 64, "H": 56, "W": 56, "KS": 3},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero"],
    # one multiply-add per (n, o, i, j, c, p, q), plus the bias add
    "flops": "2*N*C_OUT*(H-KS+1)*(W-KS+1)*C_IN*KS*KS + N*C_OUT*(H-KS+1)*(W-KS+1)",
    # read x, weights and bias, write y (fp32)
    "bytes": "4*(N*C_IN*H*W + C_OUT*C_IN*KS*KS + C_OUT + N*C_OUT*(H-KS+1)*(W-KS+1))",
    "tags": ["conv", "compute-bound"],
}

N = 16
C_IN = 64
C_OUT = 128
H = 128
W = 128
KS = 3


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int, ks: int):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, ks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, KS]
