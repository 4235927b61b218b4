# A row maximum whose metadata lists its own input draws, every one of them with values of both signs.
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "reduction",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 64, "D": 1024},
        "small": [{"B": 8, "D": 256}, {"B": 5, "D": 77}],
        "sweep": [{"B": 3, "D": 1001}, {"B": 17, "D": 4099}],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "near_zero"],
    "flops": "B*D",
    "bytes": "4*(B*D + B)",
}

B, D = 64, 1024


class Model(nn.Module):
    def forward(self, x):
        return x.amax(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
