"""An affine scale y = x * w + b whose 1-D parameters are initialised to ones and zeros."""
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "elementwise", "dtype": "float32",
    "shapes": {"nominal": {"B": 512, "D": 1024}, "small": [{"B": 8, "D": 64}, {"B": 5, "D": 77}],
               "sweep": [{"B": 1, "D": 3}, {"B": 33, "D": 1001}]},
    "flops": "2*B*D", "bytes": "8*B*D",
}
B = 512
D = 1024


class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.b = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return x * self.w + self.b


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return [D]
