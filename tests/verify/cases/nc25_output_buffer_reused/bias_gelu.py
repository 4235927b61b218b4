# TASK: fused bias add + exact (erf) GELU, y = gelu(x + bias); a valid task file.
import torch
import torch.nn as nn

KSTRATA = {
    "level": 2,
    "category": "elementwise",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 4096, "N": 4096},
        "small": [{"B": 8, "N": 512}, {"B": 3, "N": 99}],
        "sweep": [{"B": 1, "N": 4096}, {"B": 65, "N": 1023}],
    },
    "flops": "10*B*N",
    "bytes": "4*(2*B*N + N)",
}

B, N = 4096, 4096


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(0.1 * torch.randn(n))

    def forward(self, x):
        return torch.nn.functional.gelu(x + self.bias)


def get_inputs():
    return [torch.randn(B, N)]


def get_init_inputs():
    return [N]
