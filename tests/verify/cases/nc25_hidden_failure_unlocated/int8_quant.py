# TASK: per-row symmetric int8 quantisation: scale = absmax/127 (clamped at 1e-8), q = round(x/scale) clamped to [-127, 127]; returns (q int8, scale float32); a valid task file.
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "quantization",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 2048, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [{"B": 1, "D": 4096}, {"B": 127, "D": 1001}],
    },
}

B, D = 2048, 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        scale = (x.abs().amax(dim=-1, keepdim=True) / 127.0).clamp_min(1e-8)
        q = torch.round(x / scale).clamp(-127, 127).to(torch.int8)
        return q, scale


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
