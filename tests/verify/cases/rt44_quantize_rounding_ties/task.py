"""quantize_per_tensor (kstrata's suite) with inputs placed at rounding ties: x = (k + 1/2) * s
rounded to float32, so x / s lies within a unit of roundoff of a .5 tie for every element, and
a kernel that multiplies by 1 / s lands on the other side of the tie for some of them."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "quant",
    "dtype": "float32",
    "description": "int8 quantization of x (B, D) at a scalar scale s, every x at a rounding tie.",
    "shapes": {
        "nominal": {"B": 64, "D": 1024},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [{"B": 3, "D": 4099}, {"B": 127, "D": 1001}],
    },
    "distributions": ["normal", "uniform"],
    "dist_inputs": [0],
    "tolerance": {"kind": "quant", "cosine": 0.999, "rel_l1": 0.01, "rmse": 0.02},
    "flops": "4*B*D",
    "bytes": "4*B*D + 4 + B*D",
    "tags": ["quantize", "int8", "memory-bound"],
}

B = 64
D = 1024
SCALE = 2.5 / 127


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return torch.round(x / scale).clamp(-128, 127).to(torch.int8)


def get_inputs():
    k = torch.randint(-140, 140, (B, D)).double()
    return [((k + 0.5) * SCALE).float(), torch.tensor([SCALE])]


def get_init_inputs():
    return []
