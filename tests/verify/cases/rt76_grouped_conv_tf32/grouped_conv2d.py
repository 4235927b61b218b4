"""Grouped 2-D convolution (GROUPS groups), stride 1, no padding, with many channels per group
(K = C_IN / GROUPS * KS * KS up to 2304 terms; ResNeXt-like)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "conv",
    "dtype": "float32",
    "description": "nn.Conv2d(C_IN, C_OUT, KS, groups=GROUPS) with bias on an (N, C_IN, H, W) batch; "
    "output (N, C_OUT, H-KS+1, W-KS+1).",
    "shapes": {
        "nominal": {"N": 2, "C_IN": 512, "C_OUT": 64, "H": 16, "W": 16, "KS": 3, "GROUPS": 2},
        "small": [
            {"N": 1, "C_IN": 4, "C_OUT": 6, "H": 7, "W": 6, "KS": 3, "GROUPS": 2},
        ],
        "sweep": [
            {"N": 1, "C_IN": 2, "C_OUT": 2, "H": 3, "W": 3, "KS": 3, "GROUPS": 2},
            {"N": 1, "C_IN": 512, "C_OUT": 32, "H": 14, "W": 13, "KS": 3, "GROUPS": 2},
            {"N": 2, "C_IN": 640, "C_OUT": 16, "H": 9, "W": 11, "KS": 3, "GROUPS": 2},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero"],
    "flops": "2*N*C_OUT*(H-KS+1)*(W-KS+1)*C_IN/GROUPS*KS*KS",
    "bytes": "4*(N*C_IN*H*W + C_OUT*C_IN/GROUPS*KS*KS + C_OUT + N*C_OUT*(H-KS+1)*(W-KS+1))",
    "tags": ["conv", "compute-bound"],
}

N, C_IN, C_OUT, H, W, KS, GROUPS = 2, 512, 64, 16, 16, 3, 2


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int, ks: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, ks, groups=groups)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, KS, GROUPS]
