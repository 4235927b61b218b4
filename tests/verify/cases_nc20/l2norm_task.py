import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "norm",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 2048, "D": 2048},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [{"B": 1, "D": 2048}, {"B": 127, "D": 1001}],
    },
    "flops": "3*B*D",
    "bytes": "4*(2*B*D)",
}

B, D = 2048, 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.sqrt((x * x).sum(-1, keepdim=True) + 1e-12)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
