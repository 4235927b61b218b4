"""W8A8 int8 GEMM with per-token activation scales and per-channel weight scales
(SmoothQuant-style, Xiao et al. 2023; LLM.int8() vector-wise scaling, Dettmers et al. 2022):

    acc[m, n] = sum_k xq[m, k] * wq[n, k]          (exact integer accumulation)
    y[m, n]   = acc[m, n] * sx[m] * sw[n]           (explicit dequantization, float32)

The reference computes the integer product exactly on any device: it splits K into chunks
of 1024, so every partial sum is an integer of magnitude <= 1024 * 127^2 < 2^24 and is
exact in float32 (int8 values and their products are exact in float32 and TF32), then adds
the chunk results in int32. A kernel would use int8 tensor cores (IMMA) with int32
accumulators."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 2,
    "category": "quant",
    "dtype": "int8",
    "description": "y = (xq @ wq^T) * sx * sw^T with int8 activations xq (M, K) and per-token "
    "scales sx (M, 1) as inputs, int8 weights wq (N, K) and per-channel scales sw (N,) as "
    "buffers (quantized from a random float weight in __init__); float32 output (M, N). "
    "Inputs are already quantized, so no distribution applies.",
    "shapes": {
        "nominal": {"M": 4096, "K": 4096, "N": 4096},
        "small": [{"M": 16, "K": 128, "N": 64}, {"M": 5, "K": 77, "N": 33}],
        "sweep": [
            {"M": 1, "K": 2, "N": 3},
            {"M": 127, "K": 33, "N": 129},
            {"M": 257, "K": 2053, "N": 17},
            {"M": 509, "K": 1031, "N": 521},
        ],
    },
    "distributions": ["normal"],
    "dist_inputs": [],
    "tolerance": {"kind": "quant", "cosine": 0.95, "rel_l1": 0.05, "rmse": 0.10},
    # integer multiply-adds, then two scale multiplies per output
    "flops": "2*M*N*K + 2*M*N",
    # read xq and wq (1 byte), sx and sw (fp32), write y (fp32)
    "bytes": "M*K + N*K + 4*M + 4*N + 4*M*N",
    "tags": ["gemm", "int8", "dequant-epilogue"],
}

M = 4096
K = 4096
N = 4096
CHUNK = 1024


def _quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8 quantization: scale = amax|x| / 127."""
    scale = x.abs().amax(dim=1, keepdim=True).clamp_min(1e-8) / 127
    return torch.round(x / scale).clamp(-127, 127).to(torch.int8), scale


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        wq, sw = _quantize_rows(0.02 * torch.randn(out_features, in_features))
        self.register_buffer("wq", wq)
        self.register_buffer("sw", sw.squeeze(1))

    def forward(self, xq: torch.Tensor, sx: torch.Tensor) -> torch.Tensor:
        acc = torch.zeros(xq.shape[0], self.wq.shape[0], dtype=torch.int32, device=xq.device)
        for k0 in range(0, xq.shape[1], CHUNK):
            a = xq[:, k0 : k0 + CHUNK].to(torch.float32)
            b = self.wq[:, k0 : k0 + CHUNK].to(torch.float32)
            acc += (a @ b.t()).to(torch.int32)
        return acc.to(sx.dtype) * sx * self.sw.to(sx.dtype)


def get_inputs():
    xq, sx = _quantize_rows(torch.randn(M, K))
    return [xq, sx]


def get_init_inputs():
    return [K, N]
