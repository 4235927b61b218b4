"""3x3 convolution (padding 1) with bias followed by ReLU:
y = max(conv2d(x, w, padding=1) + b, 0) (the VGG/ResNet building block; Simonyan &
Zisserman 2015; KernelBench level 2 "Conv2d_ReLU"-like)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 2,
    "category": "fusion",
    "dtype": "float32",
    "description": "relu(Conv2d(C_IN, C_OUT, 3, padding=1)(x)) on (N, C_IN, H, W); output "
    "(N, C_OUT, H, W). Padding borders and odd H/W are where tiled kernels go wrong.",
    "shapes": {
        "nominal": {"N": 16, "C_IN": 64, "C_OUT": 128, "H": 128, "W": 128},
        "small": [
            {"N": 2, "C_IN": 8, "C_OUT": 16, "H": 16, "W": 16},
            {"N": 1, "C_IN": 3, "C_OUT": 5, "H": 13, "W": 7},
        ],
        "sweep": [
            {"N": 1, "C_IN": 1, "C_OUT": 3, "H": 1, "W": 2},
            {"N": 3, "C_IN": 7, "C_OUT": 13, "H": 33, "W": 17},
            {"N": 2, "C_IN": 17, "C_OUT": 33, "H": 65, "W": 67},
            {"N": 4, "C_IN": 64, "C_OUT": 64, "H": 56, "W": 56},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero"],
    # 9*C_IN multiply-adds per output, then bias add and max
    "flops": "2*N*C_OUT*H*W*C_IN*9 + 2*N*C_OUT*H*W",
    # read x, weights and bias, write y (fp32)
    "bytes": "4*(N*C_IN*H*W + C_OUT*C_IN*9 + C_OUT + N*C_OUT*H*W)",
    "tags": ["conv", "epilogue"],
}

N = 16
C_IN = 64
C_OUT = 128
H = 128
W = 128


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(N, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT]
