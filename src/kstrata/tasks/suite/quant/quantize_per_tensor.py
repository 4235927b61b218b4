"""Per-tensor symmetric int8 quantization with a static scale:
q = clamp(round_half_even(x / s), -128, 127) as int8 (PyTorch's quantize_per_tensor with
zero point 0; Jacob et al. 2018, "Quantization and Training of Neural Networks for
Efficient Integer-Arithmetic-Only Inference")."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "quant",
    "dtype": "float32",
    "description": "int8 quantization of x (B, D) float32 with a scalar scale s (input of "
    "shape (1,), 2.5/127 so that ~1% of normal inputs saturate and the clamp matters). "
    "Policy 'quant', not 'exact': the int8 output must equal the reference's except one "
    "step where x / s is within rounding of a .5 tie (~1 in 10^6 elements), where the float32 "
    "reference, the float64 oracle and a kernel that multiplies by 1/s may differ. Floor "
    "instead of round, or a missing clamp (int8 wrap-around), fails. Distributions that "
    "saturate ('large', 'shifted') or zero ('near_zero') the whole output are left out; the "
    "'outliers' draw (values up to 1e9 among normal ones) shows a clamp after a narrowing cast.",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 1, "D": 7},
            {"B": 3, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 33, "D": 65537},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed"],
    "dist_inputs": [0],
    "tolerance": {"kind": "quant", "cosine": 0.999, "rel_l1": 0.01, "rmse": 0.02},
    # divide, round, clamp (2) per element
    "flops": "4*B*D",
    # read x (fp32) and the scale, write q (int8)
    "bytes": "4*B*D + 4 + B*D",
    "tags": ["quantize", "int8", "memory-bound"],
}

B = 4096
D = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return torch.round(x / scale).clamp(-128, 127).to(torch.int8)


def get_inputs():
    return [torch.randn(B, D), torch.tensor([2.5 / 127])]


def get_init_inputs():
    return []
