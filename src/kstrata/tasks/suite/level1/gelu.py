"""GELU (exact, erf form), elementwise: y = x * 0.5 * (1 + erf(x / sqrt(2)))
(Hendrycks & Gimpel 2016, "Gaussian Error Linear Units"; KernelBench level 1 #26)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 1,
    "category": "activation",
    "dtype": "float32",
    "description": "Elementwise exact (erf) GELU of a (B, D) tensor; the tanh approximation "
    "is not exact enough for the oracle tolerance.",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 1, "D": 3},
            {"B": 1, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 33, "D": 65537},
        ],
    },
    # "shifted" (x - 10) would make the output all (near) zero
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero"],
    # erf (~10 flops by polynomial) + 4 multiplies/adds per element
    "flops": "14*B*D",
    # read x, write y (fp32)
    "bytes": "4*2*B*D",
    "tags": ["activation", "memory-bound"],
}

B = 4096
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
