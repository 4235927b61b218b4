"""Per-channel symmetric int8 quantization of a weight matrix with static per-row scales:
q[n, k] = clamp(round_half_even(w[n, k] / s[n]), -128, 127) as int8 (PyTorch's
quantize_per_channel along axis 0 with zero point 0; Krishnamoorthi 2018, "Quantizing deep
convolutional networks for efficient inference")."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "quant",
    "dtype": "float32",
    "description": "int8 quantization of w (N, K) float32 with per-row scales s (N,) given as "
    "an input; s = 0.8 * amax|w[n]| / 127, so each row spans the int8 range and its largest "
    "values saturate. Rows have different magnitudes (w = randn * (0.1 + row factor)), so a "
    "scale applied along the wrong axis fails. The int8 output must equal the reference's "
    "except one step where w / s is within rounding of a .5 tie (torch.round rounds half to "
    "even), where the float32 reference, the float64 oracle and a kernel that multiplies by "
    "1/s may differ; truncation toward zero, floor, or a clamp off by one fails.",
    "shapes": {
        "nominal": {"N": 8192, "K": 4096},
        "small": [{"N": 64, "K": 128}, {"N": 77, "K": 5}],
        "sweep": [
            {"N": 1, "K": 7},
            {"N": 3, "K": 4099},
            {"N": 1001, "K": 127},
            {"N": 4097, "K": 1031},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed"],
    "dist_inputs": [0],
    "tolerance": {"kind": "quant", "cosine": 0.999, "rel_l1": 0.01, "rmse": 0.02},
    # divide, round, clamp (2) per element
    "flops": "4*N*K",
    # read w (fp32) and scales, write q (int8)
    "bytes": "4*N*K + 4*N + N*K",
    "tags": ["quantize", "int8", "per-channel", "memory-bound"],
}

N = 8192
K = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return torch.round(w / scale[:, None]).clamp(-128, 127).to(torch.int8)


def get_inputs():
    w = torch.randn(N, K) * (0.1 + 2 * torch.rand(N, 1))
    return [w, 0.8 * w.abs().amax(dim=1) / 127]


def get_init_inputs():
    return []
