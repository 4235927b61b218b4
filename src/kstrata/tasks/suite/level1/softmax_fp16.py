"""Softmax over the last axis in float16: y = exp(x - max x) / sum exp(x - max x)
(KernelBench level 1 #23, half-precision variant)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "softmax",
    "dtype": "float16",
    "description": "Row softmax of a (B, D) float16 tensor (float32 accumulation expected). "
    "'shifted' inputs expose a 0.0 padding value in the max or the sum.",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 1, "D": 2},
            {"B": 3, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 17, "D": 32771},
        ],
    },
    # near_zero rows are flat to within float16 resolution (output ~ constant 1/D)
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "shifted"],
    "precision": {"allow_reduced_precision": True},
    # max, subtract, exp, sum, divide per element
    "flops": "5*B*D",
    # read x, write y (fp16)
    "bytes": "2*2*B*D",
    "tags": ["softmax", "memory-bound", "half"],
}

B = 4096
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(B, D).half()]


def get_init_inputs():
    return []
