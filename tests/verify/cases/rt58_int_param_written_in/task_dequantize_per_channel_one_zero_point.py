"""Per-channel int8 dequantization w = (q - z[:, None]) * s[:, None]; the zero points are one value (5)."""
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "quant", "dtype": "float32",
    "shapes": {"nominal": {"N": 256, "K": 512}, "small": [{"N": 8, "K": 64}, {"N": 7, "K": 5}],
               "sweep": [{"N": 1, "K": 3}, {"N": 33, "K": 1001}]},
    "distributions": ["normal"], "dist_inputs": [],
    "flops": "2*N*K", "bytes": "5*N*K",
}
N = 256
K = 512


class Model(nn.Module):
    def forward(self, q, zero_point, scale):
        return (q.to(torch.int32) - zero_point[:, None]).to(scale.dtype) * scale[:, None]


def get_inputs():
    q = torch.randint(-128, 128, (N, K), dtype=torch.int8)
    return [q, torch.full((N,), 5, dtype=torch.int32), 10 ** (torch.rand(N) * 2 - 3)]


def get_init_inputs():
    return []
