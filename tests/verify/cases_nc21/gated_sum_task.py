import torch
import torch.nn as nn

KSTRATA = {
    "level": 2,
    "category": "reduction",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 64, "C": 256, "L": 1024},
        "small": [{"B": 2, "C": 16, "L": 64}, {"B": 3, "C": 7, "L": 33}],
        "sweep": [{"B": 1, "C": 256, "L": 1024}, {"B": 5, "C": 131, "L": 257}],
    },
    "flops": "5*B*C*L",
    "bytes": "4*(2*B*C*L + C + B*L)",
}

B, C, L = 64, 256, 1024


class Model(nn.Module):
    """out[b, l] = sum_c x[b,c,l] * sigmoid(g[b,c,l]) * w[c]  (reduction along dim 1)."""

    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(channels))

    def forward(self, x, g):
        return (x * torch.sigmoid(g) * self.weight[None, :, None]).sum(dim=1)


def get_inputs():
    return [torch.randn(B, C, L), torch.randn(B, C, L)]


def get_init_inputs():
    return [C]
