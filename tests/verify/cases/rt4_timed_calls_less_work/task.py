import torch
import torch.nn as nn

KSTRATA = {
    "level": 2, "category": "fusion", "dtype": "float32",
    "shapes": {"nominal": {"B": 2048, "D": 4096}, "small": [{"B": 5, "D": 77}],
               "sweep": [{"B": 1, "D": 3}, {"B": 33, "D": 1001}]},
    "flops": "3*B*D", "bytes": "8*B*D",
}
B = 2048
D = 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x * 2.0 + 1.0)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
