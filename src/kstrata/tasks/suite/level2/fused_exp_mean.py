"""Mean of exp over the last axis: y[b] = (1/D) sum_d exp(x[b, d]).

The classic masked-load bug: a blocked kernel that loads out-of-range lanes with
``other=0.0`` and then applies exp adds exp(0) = 1 per padded lane. With all-negative
('shifted') inputs those ones dominate the true sum, and D not a multiple of the block
size exposes them."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 2,
    "category": "fusion",
    "dtype": "float32",
    "description": "mean(exp(x), dim=-1) of a (B, D) tensor, output (B,). Sweep sizes are not "
    "multiples of 2/16/128 so padded lanes exist; 'shifted' inputs (x - 10) make a padding "
    "value of 0.0 (exp -> 1) stand out. 'large' and 'heavy_tailed' are left out: exp "
    "overflows float32 there, in the reference too.",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 3, "D": 2},
            {"B": 3, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 17, "D": 65537},
        ],
    },
    "distributions": ["normal", "uniform", "near_zero", "shifted"],
    # exp and add per element, one divide per row
    "flops": "2*B*D + B",
    # read x (fp32), write B means
    "bytes": "4*(B*D + B)",
    "tags": ["reduction", "masking", "memory-bound"],
}

B = 4096
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x).mean(dim=-1)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
