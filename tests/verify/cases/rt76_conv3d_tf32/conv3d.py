"""3-D convolution, stride 1, no padding, with many input channels (K = C_IN * KS^3 up to 3456 terms;
video/volumetric models, KernelBench level 1 conv_standard_3D-like)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "conv",
    "dtype": "float32",
    "description": "nn.Conv3d(C_IN, C_OUT, KS) with bias on an (N, C_IN, D, H, W) batch; "
    "output (N, C_OUT, D-KS+1, H-KS+1, W-KS+1).",
    "shapes": {
        "nominal": {"N": 1, "C_IN": 128, "C_OUT": 16, "D": 8, "H": 10, "W": 10, "KS": 3},
        "small": [
            {"N": 1, "C_IN": 3, "C_OUT": 5, "D": 4, "H": 5, "W": 6, "KS": 3},
        ],
        "sweep": [
            {"N": 1, "C_IN": 1, "C_OUT": 2, "D": 3, "H": 3, "W": 3, "KS": 3},
            {"N": 1, "C_IN": 128, "C_OUT": 16, "D": 6, "H": 9, "W": 7, "KS": 3},
            {"N": 2, "C_IN": 160, "C_OUT": 8, "D": 5, "H": 6, "W": 7, "KS": 3},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero"],
    "flops": "2*N*C_OUT*(D-KS+1)*(H-KS+1)*(W-KS+1)*C_IN*KS*KS*KS",
    "bytes": "4*(N*C_IN*D*H*W + C_OUT*C_IN*KS*KS*KS + C_OUT + N*C_OUT*(D-KS+1)*(H-KS+1)*(W-KS+1))",
    "tags": ["conv", "compute-bound"],
}

N, C_IN, C_OUT, D, H, W, KS = 1, 128, 16, 8, 10, 10, 3


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int, ks: int):
        super().__init__()
        self.conv = nn.Conv3d(c_in, c_out, ks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, C_IN, D, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, KS]
