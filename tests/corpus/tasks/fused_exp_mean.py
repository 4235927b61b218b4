"""Row mean of exp: y[b] = mean_d exp(x[b, d]) (a fused reduction whose padding must not pass through exp)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "reduction", "dtype": "float32",
    "shapes": {"nominal": {"B": 1024, "D": 4096},
               "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
               "sweep": [{"B": 1, "D": 1}, {"B": 7, "D": 1001}]},
    "distributions": ["normal", "uniform", "near_zero", "shifted"],
    "flops": "2*B*D", "bytes": "4*(B*D + B)",
}
B = 1024
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.exp(x).mean(dim=-1)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
