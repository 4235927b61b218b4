"""Per-tensor uint8 dequantization y = (q - z) * s, the zero point a Python int among the inputs."""
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "quant", "dtype": "float32",
    "shapes": {"nominal": {"B": 256, "D": 512}, "small": [{"B": 8, "D": 64}, {"B": 5, "D": 77}],
               "sweep": [{"B": 1, "D": 3}, {"B": 33, "D": 1001}]},
    "distributions": ["normal"], "dist_inputs": [],
    "flops": "2*B*D", "bytes": "5*B*D",
}
B = 256
D = 512


class Model(nn.Module):
    def forward(self, q, scale, zero_point: int):
        return (q.to(torch.int32) - zero_point).to(torch.float32) * scale


def get_inputs():
    return [torch.randint(0, 256, (B, D), dtype=torch.uint8), torch.tensor([0.02]), 128]


def get_init_inputs():
    return []
