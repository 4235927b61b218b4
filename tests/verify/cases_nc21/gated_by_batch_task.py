import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "elementwise",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 8, "D": 64},
        "small": [{"B": 2, "D": 16}, {"B": 3, "D": 16}],
        "sweep": [{"B": 5, "D": 33}],
    },
}

B, D = 8, 64


class Model(nn.Module):
    """x where the batch has more than 2 rows, else zeros: at B=2 every output element is 0."""

    def forward(self, x):
        return x * float(x.shape[0] > 2)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
