"""ReLU whose contract includes NaN/Inf propagation: it opts in to the
``nonfinite`` draw (NaN, +inf and -inf among the normal values)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "elementwise", "dtype": "float32",
    "shapes": {"nominal": {"B": 64, "D": 1000}, "small": [{"B": 5, "D": 77}],
               "sweep": [{"B": 1, "D": 3}, {"B": 33, "D": 257}]},
    "distributions": ["normal", "uniform", "nonfinite"],
    "flops": "B*D", "bytes": "8*B*D",
}
B = 64
D = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x)


def get_inputs():
    return [2 * torch.randn(B, D)]


def get_init_inputs():
    return []
