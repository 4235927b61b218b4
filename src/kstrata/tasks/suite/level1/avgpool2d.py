"""2-D average pooling, kernel 2, stride 2, no padding (KernelBench level 1 #45-like):
y[n, c, i, j] = mean of x[n, c, 2i:2i+2, 2j:2j+2]; a trailing odd row/column is dropped."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "pooling",
    "dtype": "float32",
    "description": "AvgPool2d(2, stride=2) of an (N, C, H, W) tensor; output "
    "(N, C, H//2, W//2). Odd H/W test that the last row/column is dropped, not averaged.",
    "shapes": {
        "nominal": {"N": 32, "C": 64, "H": 224, "W": 224},
        "small": [{"N": 2, "C": 8, "H": 16, "W": 16}, {"N": 1, "C": 3, "H": 13, "W": 7}],
        "sweep": [
            {"N": 1, "C": 3, "H": 2, "W": 3},
            {"N": 3, "C": 5, "H": 33, "W": 17},
            {"N": 2, "C": 17, "H": 65, "W": 127},
            {"N": 4, "C": 64, "H": 112, "W": 112},
        ],
    },
    # 3 adds and 1 multiply per output
    "flops": "4*N*C*(H//2)*(W//2)",
    # read x, write y (fp32)
    "bytes": "4*(N*C*H*W + N*C*(H//2)*(W//2))",
    "tags": ["pooling", "memory-bound"],
}

N = 32
C = 64
H = 224
W = 224


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
