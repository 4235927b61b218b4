import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "reduction",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 2048, "D": 1024},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [{"B": 1, "D": 1024}, {"B": 127, "D": 1001}],
    },
    "flops": "2*B*D",
    "bytes": "4*(B*D + B)",
}

B, D = 2048, 1024


class Model(nn.Module):
    """Row max minus row mean: y[b] = max_d x[b,d] - mean_d x[b,d]."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.amax(dim=-1) - x.mean(dim=-1)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
