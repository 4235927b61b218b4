"""(rt87 case: the suite's fake_quant_per_token with a nominal shape of T=2048, D=512, a multiple of 16
rows as the suite's 8192, small enough for a test.)

Dynamic per-token int8 fake quantization (quantize-dequantize), as used to simulate W8A8
activations (SmoothQuant, Xiao et al. 2023; LLM.int8(), Dettmers et al. 2022):

    s[t]    = max_d |x[t, d]| / 127
    y[t, d] = clamp(round_half_even(x[t, d] / s[t]), -127, 127) * s[t]

A row reduction (absmax) fused with an elementwise quantize-dequantize."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 2,
    "category": "quant",
    "dtype": "float32",
    "description": "Per-row (token) absmax int8 fake quantization of x (T, D) float32; output "
    "float32 (T, D) on the int8 grid of each row. Quant metrics with tight thresholds: "
    "rounding ties at ulp level may move an element by one step. An all-zero row divides "
    "by zero (scale 0): the reference and the float64 oracle give NaN there, so the rows "
    "that hidden 'near_zero' tests set to zero are not judged; every other row is.",
    "shapes": {
        "nominal": {"T": 2048, "D": 512},
        "small": [{"T": 8, "D": 512}, {"T": 5, "D": 77}],
        "sweep": [
            {"T": 1, "D": 2},
            {"T": 3, "D": 4099},
            {"T": 127, "D": 1001},
            {"T": 17, "D": 65537},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero", "shifted"],
    "tolerance": {"kind": "quant", "cosine": 0.999, "rel_l1": 0.01, "rmse": 0.02},
    # absmax (2 per element), then divide, round, clamp (2), multiply per element
    "flops": "7*T*D",
    # read x, write y (fp32)
    "bytes": "4*2*T*D",
    "tags": ["quantize", "int8", "reduction", "memory-bound"],
}

T = 2048
D = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = x.abs().amax(dim=-1, keepdim=True) / 127
        return torch.round(x / scale).clamp(-127, 127) * scale


def get_inputs():
    return [torch.randn(T, D)]


def get_init_inputs():
    return []
