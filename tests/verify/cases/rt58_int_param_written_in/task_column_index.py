"""One column of x scaled: y = x[:, idx] * 2, the column index a one-element int64 tensor (D // 4)."""
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "elementwise", "dtype": "float32",
    "shapes": {"nominal": {"B": 256, "D": 512}, "small": [{"B": 8, "D": 64}, {"B": 5, "D": 77}],
               "sweep": [{"B": 1, "D": 3}, {"B": 33, "D": 1001}]},
    "flops": "B", "bytes": "8*B",
}
B = 256
D = 512


class Model(nn.Module):
    def forward(self, x, idx):
        return x[:, idx] * 2


def get_inputs():
    return [torch.randn(B, D), torch.tensor([D // 4])]


def get_init_inputs():
    return []
