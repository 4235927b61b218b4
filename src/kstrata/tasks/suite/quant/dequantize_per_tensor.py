"""Per-tensor int8 dequantization: y = (q - z) * s with a scalar scale s and an integer
zero point z (PyTorch's dequantize of a per_tensor_affine tensor; Jacob et al. 2018)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "quant",
    "dtype": "float32",
    "description": "float32 y = (q - z) * s for int8 q (B, D), zero point z (int32, shape (1,)) "
    "and scale s (float32, shape (1,)). One subtraction of small integers and one rounding "
    "multiply per element is deterministic, so the default oracle tolerance is used instead "
    "of quant metrics. Inputs are integers and a fixed scale: no distribution applies.",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 1, "D": 3},
            {"B": 3, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 33, "D": 65537},
        ],
    },
    "distributions": ["normal"],
    "dist_inputs": [],
    # subtract and multiply per element
    "flops": "2*B*D",
    # read q (int8), z and s, write y (fp32)
    "bytes": "B*D + 8 + 4*B*D",
    "tags": ["dequantize", "int8", "memory-bound"],
}

B = 4096
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(
        self, q: torch.Tensor, zero_point: torch.Tensor, scale: torch.Tensor
    ) -> torch.Tensor:
        return (q.to(torch.int32) - zero_point).to(scale.dtype) * scale


def get_inputs():
    q = torch.randint(-128, 128, (B, D), dtype=torch.int8)
    return [q, torch.tensor([3], dtype=torch.int32), torch.tensor([0.0173])]


def get_init_inputs():
    return []
