# Per-head row sums of a (B, H, D) tensor, output (B, H); the batch is small in every shape the task lists.
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "reduction",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 4, "H": 16, "D": 4096},
        "small": [{"B": 2, "H": 16, "D": 256}, {"B": 3, "H": 12, "D": 77}],
        "sweep": [{"B": 4, "H": 9, "D": 1001}, {"B": 2, "H": 16, "D": 4099}],
    },
    "flops": "B*H*D",
    "bytes": "4*(B*H*D + B*H)",
}

B, H, D = 4, 16, 4096


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=2)


def get_inputs():
    return [torch.randn(B, H, D)]


def get_init_inputs():
    return []
