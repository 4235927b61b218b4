"""Per-tensor fake quantization with a float zero point of 0.0 (a one-element float32 tensor):
y = (clamp(round(x / s + z), -128, 127) - z) * s."""
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "quant", "dtype": "float32",
    "shapes": {"nominal": {"B": 256, "D": 512}, "small": [{"B": 8, "D": 64}, {"B": 5, "D": 77}],
               "sweep": [{"B": 1, "D": 3}, {"B": 33, "D": 1001}]},
    "dist_inputs": [0],
    "flops": "6*B*D", "bytes": "8*B*D",
}
B = 256
D = 512


class Model(nn.Module):
    def forward(self, x, scale, zero_point):
        return (torch.round(x / scale + zero_point).clamp(-128, 127) - zero_point) * scale


def get_inputs():
    return [torch.randn(B, D), torch.tensor([2.5 / 127]), torch.tensor([0.0])]


def get_init_inputs():
    return []
