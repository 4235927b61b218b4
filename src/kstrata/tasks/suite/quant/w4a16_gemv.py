"""W4A16 GEMV (decode, one token): float16 activations times int4 weights with per-group scales
(GPTQ/AWQ-style weight-only quantization; Frantar et al. 2023, Lin et al. 2024):

    q[n, k]  = nibble k of packed[n, k // 2]  (even k: low nibble, odd k: high nibble), 0..15
    W[n, k]  = (q[n, k] - 8) * scale[n, k // 128]
    y        = x @ W^T

The reference unpacks and dequantizes explicitly; a kernel dequantizes in registers and
never writes W."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 2,
    "category": "quant",
    "dtype": "float16",
    "description": "x (1, K) float16 times int4 weights packed two per byte in a uint8 (N, K/2) "
    "buffer with float16 (N, K/128) group scales (symmetric, zero point 8), quantized from a "
    "random float weight in __init__; output (1, N); memory bound on the packed weights. "
    "K must be a multiple of 128.",
    "shapes": {
        "nominal": {"K": 8192, "N": 8192},
        "small": [{"K": 256, "N": 64}, {"K": 128, "N": 77}],
        "sweep": [
            {"K": 128, "N": 3},
            {"K": 384, "N": 129},
            {"K": 1152, "N": 4099},
            {"K": 2048, "N": 5003},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed"],
    "dist_inputs": [0],
    "tolerance": {"kind": "quant", "cosine": 0.95, "rel_l1": 0.05, "rmse": 0.10},
    "precision": {"allow_reduced_precision": True},
    # GEMM multiply-adds, plus a subtract and multiply per dequantized weight
    "flops": "2*N*K + 2*N*K",
    # read packed weights (K*N/2 bytes), fp16 group scales and x, write y (fp16)
    "bytes": "K*N//2 + 2*N*(K//128) + 2*K + 2*N",
    "tags": ["gemv", "memory-bound", "int4", "weight-only"],
}

K = 8192
N = 8192
GROUP = 128


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, group: int = GROUP):
        super().__init__()
        self.group = group
        w = 0.02 * torch.randn(out_features, in_features // group, group)
        scale = w.abs().amax(dim=-1, keepdim=True).clamp_min(1e-8) / 7
        q = (torch.round(w / scale).clamp(-8, 7) + 8).to(torch.uint8).reshape(out_features, -1)
        self.register_buffer("packed", q[:, 0::2] | (q[:, 1::2] << 4))
        self.register_buffer("scales", scale.squeeze(-1).half())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        low = self.packed & 0x0F
        high = self.packed >> 4
        q = torch.stack((low, high), dim=-1).reshape(self.packed.shape[0], -1)
        w = (q.to(x.dtype) - 8) * self.scales.to(x.dtype).repeat_interleave(self.group, dim=1)
        return x @ w.t()


def get_inputs():
    return [torch.randn(1, K).half()]


def get_init_inputs():
    return [K, N]
