"""Per-channel asymmetric int8 dequantization of a weight matrix:
w[n, k] = (q[n, k] - z[n]) * s[n] (PyTorch's dequantize of a per_channel_affine tensor
along axis 0; Krishnamoorthi 2018)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "quant",
    "dtype": "float32",
    "description": "float32 w = (q - z[:, None]) * s[:, None] for int8 q (N, K) with per-row "
    "int32 zero points z (N,) and float32 scales s (N,) spanning two decades, so a broadcast "
    "along the wrong axis fails. Deterministic, so the default oracle tolerance is used; "
    "the float scales are fixed draws, not subject to distributions.",
    "shapes": {
        "nominal": {"N": 8192, "K": 4096},
        "small": [{"N": 64, "K": 128}, {"N": 77, "K": 5}],
        "sweep": [
            {"N": 1, "K": 3},
            {"N": 3, "K": 4099},
            {"N": 1001, "K": 127},
            {"N": 4097, "K": 1031},
        ],
    },
    "distributions": ["normal"],
    "dist_inputs": [],
    # subtract and multiply per element
    "flops": "2*N*K",
    # read q (int8), z and s (4 bytes each), write w (fp32)
    "bytes": "N*K + 8*N + 4*N*K",
    "tags": ["dequantize", "int8", "per-channel", "memory-bound"],
}

N = 8192
K = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(
        self, q: torch.Tensor, zero_point: torch.Tensor, scale: torch.Tensor
    ) -> torch.Tensor:
        return (q.to(torch.int32) - zero_point[:, None]).to(scale.dtype) * scale[:, None]


def get_inputs():
    q = torch.randint(-128, 128, (N, K), dtype=torch.int8)
    zero_point = torch.randint(-20, 21, (N,), dtype=torch.int32)
    scale = 10 ** (torch.rand(N) * 2 - 3)  # 1e-3 .. 1e-1
    return [q, zero_point, scale]


def get_init_inputs():
    return []
