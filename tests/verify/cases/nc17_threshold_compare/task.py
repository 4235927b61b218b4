import torch
import torch.nn as nn

KSTRATA = {"dtype": "float32", "shapes": {"nominal": {"B": 256, "D": 512}, "small": [{"B": 8, "D": 64}, {"B": 5, "D": 77}], "sweep": [{"B": 33, "D": 129}]}}

B, D = 256, 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x > 0.5


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
