"""Matrix transpose into contiguous memory: y[j, i] = x[i, j]; pure data movement whose
speed depends on coalescing both the reads and the writes (e.g. via shared-memory tiles)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "layout",
    "dtype": "float32",
    "description": "Contiguous transpose of an (M, N) matrix to (N, M).",
    "shapes": {
        "nominal": {"M": 8192, "N": 8192},
        "small": [{"M": 64, "N": 96}, {"M": 77, "N": 5}],
        "sweep": [
            {"M": 1, "N": 7},
            {"M": 33, "N": 4099},
            {"M": 1001, "N": 127},
            {"M": 2049, "N": 4097},
        ],
    },
    # no arithmetic
    "flops": "0",
    # read x, write y (fp32)
    "bytes": "4*2*M*N",
    "tags": ["layout", "memory-bound"],
}

M = 8192
N = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(0, 1).contiguous()


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
