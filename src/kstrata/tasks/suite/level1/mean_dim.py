"""Mean reduction over the middle axis: y[b, d] = (1/R) sum_r x[b, r, d]
(KernelBench level 1 #48). A strided reduction: the reduced axis is not contiguous."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "reduction",
    "dtype": "float32",
    "description": "Mean over axis 1 of a (B, R, D) tensor, output (B, D). Inputs are drawn "
    "N(1, 1) so the true mean is clearly nonzero (a zero output fails).",
    "shapes": {
        "nominal": {"B": 16, "R": 256, "D": 4096},
        "small": [{"B": 2, "R": 64, "D": 128}, {"B": 3, "R": 5, "D": 77}],
        "sweep": [
            {"B": 1, "R": 2, "D": 3},
            {"B": 1, "R": 1001, "D": 3},
            {"B": 7, "R": 33, "D": 4099},
            {"B": 5, "R": 127, "D": 8191},
        ],
    },
    # one add per element, one divide per output
    "flops": "B*R*D + B*D",
    # read x, write y (fp32)
    "bytes": "4*(B*R*D + B*D)",
    "tags": ["reduction", "memory-bound", "strided"],
}

B = 16
R = 256
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=1)


def get_inputs():
    return [torch.randn(B, R, D) + 1.0]


def get_init_inputs():
    return []
