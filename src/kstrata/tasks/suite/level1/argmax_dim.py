"""Argmax over the middle axis: y[b, d] = argmax_r x[b, r, d] (KernelBench level 1 #51).
A strided reduction producing int64 indices."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "reduction",
    "dtype": "float32",
    "description": "Argmax over axis 1 of a (B, R, D) tensor, int64 output (B, D), checked "
    "exactly. Inputs are a random permutation of 0..R-1 along axis 1 (scaled to [-0.5, 0.5)), "
    "so there are no ties and the expected index is unique.",
    "shapes": {
        "nominal": {"B": 16, "R": 256, "D": 4096},
        "small": [{"B": 2, "R": 64, "D": 128}, {"B": 3, "R": 5, "D": 77}],
        "sweep": [
            {"B": 1, "R": 2, "D": 3},
            {"B": 1, "R": 1001, "D": 3},
            {"B": 7, "R": 33, "D": 4099},
            {"B": 5, "R": 127, "D": 8191},
        ],
    },
    # "normal" is the permutation draw; "uniform" and "shifted" keep values distinct
    "distributions": ["normal", "uniform", "shifted"],
    "tolerance": {"kind": "exact"},
    # one compare per element
    "flops": "B*R*D",
    # read x (fp32), write int64 indices
    "bytes": "4*B*R*D + 8*B*D",
    "tags": ["reduction", "indices", "strided"],
}

B = 16
R = 256
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=1)


def get_inputs():
    perm = torch.rand(B, R, D).argsort(dim=1).to(torch.float32)
    return [perm / R - 0.5]


def get_init_inputs():
    return []
