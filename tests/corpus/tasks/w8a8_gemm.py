"""W8A8 GEMM: per-row symmetric int8 quantization of activations and weights,
integer-valued product, dequantized by both scales (as in LLM.int8 / SmoothQuant)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "quant", "dtype": "float32",
    "shapes": {"nominal": {"M": 1024, "K": 1024, "N": 1024},
               "small": [{"M": 8, "K": 64, "N": 16}, {"M": 5, "K": 33, "N": 7}],
               "sweep": [{"M": 1, "K": 1, "N": 1}, {"M": 17, "K": 129, "N": 31}]},
    "distributions": ["normal", "uniform", "heavy_tailed"],
    "tolerance": {"kind": "quant", "cosine": 0.99, "rel_l1": 0.05, "rmse": 0.08},
    "flops": "2*M*K*N", "bytes": "4*(M*K + N*K + M*N)",
}
M = 1024
K = 1024
N = 1024


def quantize(t):
    scale = t.abs().amax(dim=-1, keepdim=True).clamp_min(1e-8) / 127
    return torch.round(t / scale).clamp(-127, 127), scale


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n, k))

    def forward(self, x):
        xq, sx = quantize(x)
        wq, sw = quantize(self.weight)
        return (xq @ wq.T) * sx * sw.T


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
