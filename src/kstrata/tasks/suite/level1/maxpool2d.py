"""2-D max pooling, kernel 3, stride 2, padding 1 (the ResNet stem pool; He et al. 2016;
KernelBench level 1 #42-like): y[n, c, i, j] = max over the 3x3 window at (2i-1, 2j-1),
padding counts as -inf."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "pooling",
    "dtype": "float32",
    "description": "MaxPool2d(3, stride=2, padding=1) of an (N, C, H, W) tensor; output "
    "(N, C, floor((H-1)/2)+1, floor((W-1)/2)+1). 'shifted' (all-negative) inputs expose "
    "zero padding.",
    "shapes": {
        "nominal": {"N": 32, "C": 64, "H": 224, "W": 224},
        "small": [{"N": 2, "C": 8, "H": 16, "W": 16}, {"N": 1, "C": 3, "H": 13, "W": 7}],
        "sweep": [
            {"N": 1, "C": 2, "H": 3, "W": 5},
            {"N": 3, "C": 5, "H": 33, "W": 17},
            {"N": 2, "C": 17, "H": 65, "W": 127},
            {"N": 4, "C": 64, "H": 112, "W": 112},
        ],
    },
    # 8 compares per output over a 3x3 window
    "flops": "8*N*C*(floor((H-1)/2)+1)*(floor((W-1)/2)+1)",
    # read x, write y (fp32)
    "bytes": "4*(N*C*H*W + N*C*(floor((H-1)/2)+1)*(floor((W-1)/2)+1))",
    "tags": ["pooling", "memory-bound"],
}

N = 32
C = 64
H = 224
W = 224


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
